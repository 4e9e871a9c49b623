// Connecting an MCP client with OAuth: the consent page (#/connect?request={id}, where the service's
// /oauth/authorize sends the holder) and the connected apps listed under Agents. What a client wrote about itself
// (its name) is shown as text, beside the host its answer goes to: a name is the client's own claim, the host is not.
import { el, facts } from './dom.js';
import { relativeTime } from './format.js';

/** The choice of agent: each agent of the account, or a new one named after the client (editable). */
function agentChoice(request, agents) {
  const options = agents.map((a) =>
    el(
      'label',
      { className: 'choice' },
      el('input', { type: 'radio', name: 'connect-agent', value: a.agent_id }),
      ` ${a.name}`,
    ),
  );
  const name = el('input', {
    type: 'text',
    name: 'connect-agent-name',
    value: request.client_name.slice(0, 100),
    maxLength: 100,
    'aria-label': 'Name of the new agent',
  });
  const fresh = el(
    'label',
    { className: 'choice' },
    el('input', { type: 'radio', name: 'connect-agent', value: '', checked: true }),
    ' A new agent named ',
    name,
  );
  return el('fieldset', {}, el('legend', { textContent: 'It will act as' }), ...options, fresh);
}

/** What the holder's choice sends: the agent picked, or the new agent's name. */
function chosenAgent(form) {
  const picked = form.querySelector('input[name="connect-agent"]:checked')?.value ?? '';
  if (picked) return { agent_id: picked };
  return { agent_name: form.querySelector('input[name="connect-agent-name"]').value.trim() };
}

/**
 * The consent form of an authorization request: who asks, where the answer goes, which agent it will act as, and
 * Allow / Deny. `answer(body)` sends POST /oauth/consent's body and follows its redirect.
 */
export function consentForm(request, agents, answer) {
  const form = el('form', { className: 'panel consent', 'aria-labelledby': 'connect-title' });
  form.append(
    el(
      'p',
      { className: 'lead' },
      el('strong', { textContent: request.client_name }),
      ' asks to use your approvals as an agent of this account: it may ask you for approval and read the answers, ' +
        'like any agent; it never sees a credential.',
    ),
    facts([
      ['Sends your answer to', request.redirect_host],
      [
        'Identified by',
        request.client_kind === 'metadata_document' ? request.client_id : 'a registration with this service',
      ],
      ['Home page', request.client_uri],
    ]),
    agentChoice(request, agents),
  );
  const allow = el('button', { type: 'submit', className: 'primary', textContent: 'Allow' });
  const deny = el('button', { type: 'button', textContent: 'Deny' });
  form.onsubmit = (e) => {
    e.preventDefault();
    const agent = chosenAgent(form);
    if (agent.agent_name === '') return;
    allow.disabled = deny.disabled = true;
    void answer({ request: request.request_id, allow: true, ...agent }).finally(() => {
      allow.disabled = deny.disabled = false;
    });
  };
  deny.onclick = () => {
    allow.disabled = deny.disabled = true;
    void answer({ request: request.request_id, allow: false }).finally(() => {
      allow.disabled = deny.disabled = false;
    });
  };
  form.append(el('p', { className: 'actions' }, allow, deny));
  return form;
}

/** One connected app: its name, the agent it acts as, since when; Disconnect ends it at once. */
export function connectionRow(connection, agentName, disconnect, now = Date.now()) {
  const button = el('button', {
    type: 'button',
    textContent: 'Disconnect',
    'aria-label': `Disconnect ${connection.client_name}`,
  });
  button.onclick = disconnect;
  return el(
    'li',
    {},
    el(
      'span',
      {},
      el('strong', { textContent: connection.client_name }),
      ` as ${agentName}, connected `,
      el('time', {
        className: 'relative',
        datetime: connection.created_at,
        textContent: relativeTime(connection.created_at, now),
      }),
    ),
    button,
  );
}
