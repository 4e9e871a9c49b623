// The installable app's service worker and Web Push subscription. Permission is asked only when the
// holder presses "Notify me on this phone", never on load.
import { fromBase64url } from './passkeys.js';

/** Registers the service worker (app shell cache, offline notice, notifications); undefined where unsupported. */
export async function registerServiceWorker() {
  if (!('serviceWorker' in navigator)) return undefined;
  return navigator.serviceWorker.register('/app/sw.js', { scope: '/app/' });
}

/** What the notification button should offer: unsupported, not configured, blocked, on, or off. */
export async function pushState(api) {
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window))
    return { state: 'unsupported' };
  const config = await api.get('/device/push-config');
  if (!config.vapid_public_key) return { state: 'not-configured' };
  if (Notification.permission === 'denied') return { state: 'blocked', config };
  const registration = await navigator.serviceWorker.ready;
  const subscription = await registration.pushManager.getSubscription();
  return { state: subscription && Notification.permission === 'granted' ? 'on' : 'off', config, subscription };
}

/** Asks permission (after the holder's tap), subscribes this browser and registers the subscription with the service. */
export async function enablePush(api, vapidPublicKey) {
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') return false;
  const registration = await navigator.serviceWorker.ready;
  const subscription =
    (await registration.pushManager.getSubscription()) ??
    (await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: fromBase64url(vapidPublicKey),
    }));
  const { endpoint, keys } = subscription.toJSON();
  await api.post('/device/push-subscriptions', { endpoint, keys });
  return true;
}

/** Stops notifications to this browser: unsubscribes here and at the service. */
export async function disablePush(api) {
  const registration = await navigator.serviceWorker.ready;
  const subscription = await registration.pushManager.getSubscription();
  if (!subscription) return;
  await api.delete('/device/push-subscriptions', { endpoint: subscription.endpoint });
  await subscription.unsubscribe();
}

/** Tells the service worker a request is settled, so its notification goes away on this phone. */
export function clearNotification(requestId) {
  navigator.serviceWorker?.controller?.postMessage({ type: 'request-settled', request_id: requestId });
}
