-- Definer functions run as service_role, never as whoever installed the schema (a superuser on a
-- self-managed server): service_role bypasses RLS but holds only its grants. Two trigger functions
-- added with resumable uploads (0073) and change capture (0081, 0083) were left owned by the
-- installer; they move to service_role, with the one grant capture then needs: adding rows to the
-- change outbox (it stays unreadable to every API role).
grant insert on realtime.changes to service_role;
alter function internal.queue_resumable_parts() owner to service_role;
alter function realtime.capture_change() owner to service_role;
