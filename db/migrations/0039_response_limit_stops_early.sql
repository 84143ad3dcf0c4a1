-- A data-API read whose embeds already add up to more than DATA_API_MAX_RESPONSE_BYTES stops
-- there instead of building the whole body first (docs/decisions/0010): the statement keeps a
-- running total of its embedded JSON and calls data_api.response_too_large as soon as the total
-- is over the limit. SQLSTATE TN413 is ours alone; the data API answers it with 400 TNTRY413, as
-- it answers a finished body that is too large. The detail carries the total so far and the limit.
--
-- The data API's statements run as the caller (anon too), who must reach the function, yet
-- `internal` stays invisible to clients: helpers for those statements get a schema of their own,
-- which is never exposed.
create schema data_api;
revoke all on schema data_api from public;
grant usage on schema data_api to anon, authenticated, service_role;

create function data_api.response_too_large(p_bytes bigint, p_max bigint)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  raise exception 'response body over the limit'
    using errcode = 'TN413', detail = pg_catalog.json_build_object('bytes', p_bytes, 'max', p_max)::text;
end
$$;
revoke all on function data_api.response_too_large(bigint, bigint) from public;
grant execute on function data_api.response_too_large(bigint, bigint) to anon, authenticated, service_role;
