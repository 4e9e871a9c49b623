-- An account is a team of people: every device belongs to one member, with a role (owner, admin, approver, auditor)
-- the gateway checks each route against. A member removed keeps their row (the audit trail names them) with
-- removed_at set, and their devices are revoked.
create table if not exists actions.members (
  id text primary key,
  account_id text not null references actions.accounts (id),
  name text not null,
  email text,
  role text not null check (role in ('owner', 'admin', 'approver', 'auditor')),
  created_at timestamptz not null default now(),
  removed_at timestamptz
);
create index if not exists members_account_idx on actions.members (account_id) where removed_at is null;
create unique index if not exists members_email_idx on actions.members (account_id, lower(email))
  where removed_at is null and email is not null;

-- An invite lets one device join as its member: the code is a bearer secret, so only its SHA-256 is kept.
create table if not exists actions.member_invites (
  code_hash text primary key,
  member_id text not null references actions.members (id),
  account_id text not null references actions.accounts (id),
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index if not exists member_invites_member_idx on actions.member_invites (member_id);

-- Every account as it stands becomes one owner with all its devices.
insert into actions.members (id, account_id, name, role, created_at)
select 'mem_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 20), a.id, 'Owner', 'owner', a.created_at
from actions.accounts a
where not exists (select 1 from actions.members m where m.account_id = a.id);

alter table actions.devices add column if not exists member_id text references actions.members (id);
update actions.devices d set member_id = m.id
from actions.members m
where d.member_id is null and m.account_id = d.account_id and m.role = 'owner';
alter table actions.devices alter column member_id set not null;
create index if not exists devices_member_idx on actions.devices (member_id) where revoked_at is null;

-- TOTP belongs to a person now (each member enrols their own authenticator): an account's existing one is its owner's.
alter table actions.totp add column if not exists member_id text references actions.members (id);
update actions.totp t set member_id = m.id
from actions.members m
where t.member_id is null and m.account_id = t.account_id and m.role = 'owner';
alter table actions.totp alter column member_id set not null;
alter table actions.totp drop constraint if exists totp_pkey;
alter table actions.totp add primary key (member_id);
create index if not exists totp_account_idx on actions.totp (account_id);

-- A quorum counts members: the approvals of requests still pending name the member of the device that gave them.
update actions.requests r set quorum_approvals = (
  select coalesce(jsonb_agg(e || jsonb_build_object('member_id', d.member_id) order by n), '[]'::jsonb)
  from jsonb_array_elements(r.quorum_approvals) with ordinality as a(e, n)
  left join actions.devices d on d.ref = e->>'device_id'
)
where r.status = 'pending' and jsonb_array_length(r.quorum_approvals) > 0;
