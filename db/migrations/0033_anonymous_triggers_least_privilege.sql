-- The anonymous-user triggers of 0028 run with no more power than they need, like every other
-- definer function here (see 0020): the refusal of workspaces reads auth.users as service_role,
-- and the conversion trigger needs no definer rights at all, because only the identity service
-- (which owns auth.users and auth.identities) ever updates a user row.
alter function internal.on_anonymous_user_confirmed() security invoker;
alter function internal.refuse_anonymous_workspace() owner to service_role;
