// The Team view: the account's people with their roles; owners and admins invite (a QR code of the join link for the
// new person's phone), change roles and remove members. The join page lets a phone join with an invite's code.
import { el } from './dom.js';
import qrcode from './qrcode.js';
import { abilitiesOf, joinLink, ROLES, rememberMembers } from './people.js';

const $ = (id) => document.getElementById(id);

/** A QR code of `text` as an image (a data: URL, which the app's CSP allows for images). */
export function qrImage(text, label) {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  // 6 px a module, and the quiet zone of 4 modules around it that scanners need.
  return el('img', { className: 'qr', src: qr.createDataURL(6, 24), alt: label, width: 240, height: 240 });
}

/** The roles the signed-in member may give: only an owner makes an owner. */
function rolesGivenBy(me) {
  return ROLES.filter(([role]) => role !== 'owner' || me.role === 'owner');
}

function roleSelect(member, me, onChange) {
  const select = el(
    'select',
    { 'aria-label': `Role of ${member.name}` },
    ...ROLES.map(([role]) => el('option', { value: role, textContent: role, selected: role === member.role })),
  );
  // Only an owner changes an owner or makes one; the option stays visible, disabled, so the list reads the same.
  for (const option of select.options) option.disabled = option.value === 'owner' && me.role !== 'owner';
  select.disabled = member.role === 'owner' && me.role !== 'owner';
  select.onchange = () => onChange(select.value);
  return select;
}

/** "2 devices", "invite not used yet", "no device". */
function devicesWords(member) {
  if (member.devices) return `${member.devices} ${member.devices === 1 ? 'device' : 'devices'}`;
  return member.invite_pending ? 'invite not used yet' : 'no device';
}

/** One member: name, role, email, devices; for a manager the role to change and removing (asked twice). */
function memberCard(member, me, actions) {
  const can = abilitiesOf(me.role);
  // A member's own role and removal are someone else's to change (so nobody locks themselves out by a tap).
  const mayChange = can.manage && member.member_id !== me.member_id && (member.role !== 'owner' || me.role === 'owner');
  const head = el(
    'p',
    { className: 'member-head' },
    el('span', { className: 'member-name', textContent: member.name }),
    member.member_id === me.member_id ? el('span', { className: 'muted', textContent: ' (you)' }) : null,
    el('span', { className: `badge role-${member.role}`, textContent: member.role }),
  );
  const details = el('p', {
    className: 'muted',
    textContent: [member.email, devicesWords(member)].filter(Boolean).join(' · '),
  });
  const li = el('li', { className: 'card member', 'data-member': member.member_id }, head, details);
  if (!mayChange) return li;
  const remove = el('button', {
    type: 'button',
    className: 'deny',
    textContent: 'Remove',
    'aria-label': `Remove ${member.name}`,
  });
  const controls = el(
    'div',
    { className: 'actions' },
    roleSelect(member, me, (role) => actions.changeRole(member, role)),
    remove,
  );
  remove.onclick = () => {
    const box = removal(member, actions, () => box.replaceWith(controls));
    controls.replaceWith(box);
    box.querySelector('button')?.focus();
  };
  li.append(controls);
  return li;
}

/** Removing asks once more: their devices stop working at once. */
function removal(member, actions, onCancel) {
  const yes = el('button', { type: 'button', className: 'deny', textContent: `Yes, remove ${member.name}` });
  const no = el('button', { type: 'button', className: 'cancel', textContent: 'Cancel' });
  const box = el(
    'div',
    { className: 'confirm', role: 'group' },
    el('p', { className: 'confirm-title', textContent: `Remove ${member.name}? Their devices stop working at once.` }),
    el('div', { className: 'actions' }, yes, no),
  );
  yes.onclick = () => {
    yes.disabled = true;
    actions.remove(member);
  };
  no.onclick = onCancel;
  return box;
}

/** The invite just made: the QR code of its join link, the link to send, and when it stops working. */
export function inviteCard(invited, origin) {
  const link = joinLink(origin, invited.invite.code);
  const copy = el('input', { className: 'join-link', value: link, readOnly: true, 'aria-label': 'Join link' });
  copy.onfocus = () => copy.select();
  return el(
    'div',
    { className: 'panel invite', role: 'region', 'aria-label': `Invite for ${invited.name}` },
    el('h3', { tabIndex: -1, textContent: `Invite for ${invited.name} (${invited.role})` }),
    el('p', { className: 'muted', textContent: 'Shown once. Scan it with their phone, or send them the link.' }),
    qrImage(link, `QR code of the join link for ${invited.name}`),
    copy,
    el('p', {
      className: 'muted',
      textContent: `One phone can join with it, until ${new Date(invited.invite.expires_at).toLocaleString()}.`,
    }),
  );
}

/** Draws the Team view for the signed-in member `me` ({member_id, role}). */
export async function renderTeam({ api, attempt, say, me }) {
  const { members } = await api.get('/members');
  rememberMembers(members);
  const can = abilitiesOf(me.role);
  // The list is drawn again before the message says what changed, so what it says is what the list shows.
  const redraw = () => renderTeam({ api, attempt, say, me });
  const actions = {
    changeRole: (member, role) =>
      attempt(async () => {
        await api.patch(`/members/${encodeURIComponent(member.member_id)}`, { role });
        await redraw();
        say(`${member.name}'s role is ${role} now: it applies to their devices at once.`);
      }),
    remove: (member) =>
      attempt(async () => {
        await api.delete(`/members/${encodeURIComponent(member.member_id)}`);
        await redraw();
        say(`${member.name} is removed: their devices stop working at once.`);
      }),
  };
  $('member-list').replaceChildren(...members.map((m) => memberCard(m, me, actions)));
  $('invite-form').hidden = !can.manage;
  $('team-note').hidden = can.manage;
  const role = $('invite-form').elements.role;
  const chosen = 'approver';
  role.replaceChildren(
    ...rolesGivenBy(me).map(([r, what]) =>
      el('option', { value: r, textContent: `${r} — ${what}`, selected: r === chosen }),
    ),
  );
}

/** Wires the invite form: the new member is added and their invite shown with its QR code. */
export function wireTeam({ api, attempt, say, show }) {
  $('invite-form').onsubmit = (e) => {
    e.preventDefault();
    const form = e.target;
    void attempt(async () => {
      const body = { name: form.elements.name.value.trim(), role: form.elements.role.value };
      const email = form.elements.email.value.trim();
      if (email) body.email = email;
      const invited = await api.post('/members', body);
      form.reset();
      await show();
      $('invite-shown').replaceChildren(inviteCard({ ...invited, name: body.name, role: body.role }, location.origin));
      say(`${body.name} is invited as ${body.role}: their phone joins with the code below.`);
      $('invite-shown').querySelector('h3')?.focus();
    });
  };
}
