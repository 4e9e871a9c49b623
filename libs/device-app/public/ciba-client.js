// An agent as an OpenID CIBA client, under Agents: its client_id (the client secret is its API key), how it may be
// told of an answer, and the ping endpoint the holder registers for it. The endpoint is the agent's own address,
// shown as text.
import { el, facts } from './dom.js';

/** The binding message of a CIBA request (the code its app shows too), or undefined for any other request. */
export function bindingMessageOf(item) {
  const message = item.metadata?.binding_message;
  return typeof message === 'string' && message ? message : undefined;
}

/** The binding message beside a request's title, for the holder to match with what the agent's app shows. */
export function bindingLine(item) {
  const message = bindingMessageOf(item);
  if (!message) return null;
  return el(
    'p',
    { className: 'binding-message' },
    el('span', { className: 'muted', textContent: 'The app shows: ' }),
    el('strong', { textContent: message }),
  );
}

/**
 * One agent's CIBA client details with a form to set or clear its ping endpoint; `onSave(endpoint | null)` sends
 * it and repaints.
 */
export function cibaClientPanel(client, onSave) {
  const input = el('input', {
    type: 'url',
    name: 'endpoint',
    value: client.backchannel_client_notification_endpoint ?? '',
    placeholder: 'https://agent.example/ciba/ping',
    maxLength: 2048,
    'aria-label': `Ping endpoint of ${client.name}`,
  });
  const save = el('button', { type: 'submit', textContent: 'Save endpoint' });
  const clear = el('button', {
    type: 'button',
    textContent: 'Poll only',
    'aria-label': `Poll only: clear the ping endpoint of ${client.name}`,
    disabled: !client.backchannel_client_notification_endpoint,
  });
  clear.onclick = () => onSave(null);
  const form = el(
    'form',
    { className: 'grid', 'aria-label': `CIBA ping endpoint of ${client.name}` },
    input,
    save,
    clear,
  );
  form.onsubmit = (event) => {
    event.preventDefault();
    const value = input.value.trim();
    onSave(value === '' ? null : value);
  };
  return el(
    'li',
    { className: 'ciba-client' },
    el('h4', { textContent: client.name }),
    facts([
      ['client_id', client.client_id],
      ['Client secret', 'its API key'],
      ['Authentication', client.token_endpoint_auth_methods.join(', ')],
      ['Delivery', client.backchannel_token_delivery_modes.join(' or ')],
      ['Ping endpoint', client.backchannel_client_notification_endpoint ?? 'none (polls)'],
    ]),
    form,
  );
}
