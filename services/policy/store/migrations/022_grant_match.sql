-- A grant's match ("allow for the rest of the session"): it approves only tool calls of this tool, in this session,
-- whose shell command starts with this prefix (each when set). A grant with none set approves any request its scope
-- covers, as before.
alter table policy.grants
  add column if not exists match_tool_name text,
  add column if not exists match_session_id text,
  add column if not exists match_command_prefix text;
