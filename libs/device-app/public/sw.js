// The device app's service worker: keeps the app shell for offline starts, shows a pending request as a notification
// (title, amount, risk) that opens that request, and clears it once the request is settled.
const CACHE = 'agent-auth-shell-v6';
const SHELL = [
  '/app/',
  '/app/app.js',
  '/app/api.js',
  '/app/signing.js',
  '/app/passkeys.js',
  '/app/push.js',
  '/app/format.js',
  '/app/links.js',
  '/app/views.js',
  '/app/dom.js',
  '/app/tool-calls.js',
  '/app/tool-views.js',
  '/app/verify.js',
  '/app/history.js',
  '/app/connect.js',
  '/app/ciba-client.js',
  '/app/rule-words.js',
  '/app/rules-view.js',
  '/app/people.js',
  '/app/team-view.js',
  '/app/qrcode.js',
  '/app/style.css',
  '/app/manifest.webmanifest',
  '/app/icon-192.png',
  '/app/icon-512.png',
];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
});

// The shell: network first (a new version shows at once), the cached copy when offline. The API is never cached:
// what is pending, and every decision, needs the service.
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin || !url.pathname.startsWith('/app')) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        const fresh = await fetch(event.request);
        if (fresh.ok) await cache.put(event.request, fresh.clone());
        return fresh;
      } catch {
        const cached =
          (await cache.match(event.request, { ignoreSearch: true })) ??
          (event.request.mode === 'navigate' ? await cache.match('/app/') : undefined);
        return cached ?? Response.error();
      }
    })(),
  );
});

/** Shows or clears a notification for one push message of the service (services/notifier push messages). */
async function onPushMessage(message) {
  const data = message?.data ?? {};
  const tag = data.tag ?? (data.request_id ? `request:${data.request_id}` : undefined);
  if (data.type === 'action.resolved') {
    await closeNotifications(tag);
    await tellClients({ type: 'request-settled', request_id: data.request_id });
    return;
  }
  await self.registration.showNotification(message?.title ?? 'Approval requested', {
    body: message?.body ?? 'An agent is waiting for your decision',
    tag,
    data: { url: data.url ?? '/app/', request_id: data.request_id },
    icon: '/app/icon-192.png',
    badge: '/app/icon-192.png',
    requireInteraction: true,
    timestamp: Date.now(),
  });
  await tellClients({ type: 'request-arrived', request_id: data.request_id });
}

async function closeNotifications(tag) {
  if (!tag) return;
  for (const notification of await self.registration.getNotifications({ tag })) notification.close();
}

async function tellClients(message) {
  for (const client of await self.clients.matchAll({ type: 'window', includeUncontrolled: true }))
    client.postMessage(message);
}

/** Opens the request a notification is about: an open window of the app goes there, otherwise a new one opens. */
async function onNotificationClick(notification) {
  notification.close();
  const url = new URL(notification.data?.url ?? '/app/', self.location.origin).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = windows.find((w) => new URL(w.url).pathname.startsWith('/app'));
  if (open) {
    await open.focus().catch(() => undefined);
    open.postMessage({ type: 'open', url });
    return open;
  }
  return self.clients.openWindow(url);
}

self.addEventListener('push', (event) => {
  let message;
  try {
    message = event.data?.json();
  } catch {
    message = { body: event.data?.text() };
  }
  event.waitUntil(onPushMessage(message));
});

self.addEventListener('notificationclick', (event) => event.waitUntil(onNotificationClick(event.notification)));

// The page tells the worker when it settled a request itself (its notification goes too).
self.addEventListener('message', (event) => {
  if (event.data?.type === 'request-settled') event.waitUntil(closeNotifications(`request:${event.data.request_id}`));
});

// The handlers, reachable by name (tests drive the same code the events run).
self.onPushMessage = onPushMessage;
self.onNotificationClick = onNotificationClick;
