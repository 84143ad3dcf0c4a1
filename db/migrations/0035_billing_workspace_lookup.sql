-- The workspace a payment event concerns, in the database, so a webhook handler can find it and
-- apply its order-guarded change in one statement (one round trip) instead of two. The rules are
-- those the handlers followed in TypeScript: once a workspace is linked to a Stripe customer, only
-- events naming that customer touch it (then the subscription); our own metadata only finds a
-- workspace with no customer yet, and never relinks one whose customer is another.
-- Returns one row: the workspace, or the reason the event is refused, or neither (not linked yet).
create function internal.billing_workspace_for(
  p_workspace uuid,
  p_subscription text,
  p_customer text,
  out workspace_id uuid,
  out refusal text
)
language plpgsql
stable
set search_path = ''
as $$
declare
  v_by_customer uuid;
  v_by_subscription uuid;
  v_subscription_customer text;
  v_named_customer text;
  v_named boolean;
begin
  if p_customer is not null then
    select s.workspace_id into v_by_customer from public.subscriptions s where s.stripe_customer_id = p_customer;
  end if;
  if p_subscription is not null then
    select s.workspace_id, s.stripe_customer_id into v_by_subscription, v_subscription_customer
    from public.subscriptions s where s.stripe_subscription_id = p_subscription;
  end if;
  if v_by_customer is not null then
    if v_by_subscription is not null and v_by_subscription <> v_by_customer then
      refusal := format('Refused: subscription %s belongs to another workspace than customer %s',
        p_subscription, p_customer);
      return;
    end if;
    workspace_id := v_by_customer;
    return;
  end if;
  if v_by_subscription is not null then
    if p_customer is not null and v_subscription_customer is not null then
      refusal := format('Refused: subscription %s is linked to a workspace of another customer than %s',
        p_subscription, p_customer);
      return;
    end if;
    workspace_id := v_by_subscription;
    return;
  end if;
  if p_workspace is not null then
    select true, s.stripe_customer_id into v_named, v_named_customer
    from public.subscriptions s where s.workspace_id = p_workspace;
    if v_named and v_named_customer is not null then
      refusal := format('Refused: the metadata names workspace %s, which is linked to another customer than %s',
        p_workspace, coalesce(p_customer, '(none)'));
      return;
    end if;
    if v_named then
      workspace_id := p_workspace;
    end if;
  end if;
end
$$;
revoke all on function internal.billing_workspace_for(uuid, text, text) from public;
