-- A payment event's workspace, or an error that rolls the event's transaction back: what lets the
-- webhook send a handler's one statement together with the commit (docs/decisions/0037). A
-- refusal (the event names a workspace it may not touch) is SQLSTATE TB001 with the refusal as
-- its message; an event whose workspace is not linked yet is TB002, so the provider retries it.

create function internal.billing_require_target(p_workspace uuid, p_refusal text) returns uuid
language plpgsql set search_path = ''
as $$
begin
  if p_refusal is not null then
    raise exception '%', p_refusal using errcode = 'TB001';
  end if;
  if p_workspace is null then
    raise exception 'No workspace is linked to this payment event yet' using errcode = 'TB002';
  end if;
  return p_workspace;
end
$$;
revoke all on function internal.billing_require_target(uuid, text) from public;
