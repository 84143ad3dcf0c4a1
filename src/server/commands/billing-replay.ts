// `npm run billing:replay [-- --all] [-- --id evt_…]`: re-applies stored payment events from the
// event log, oldest first: the failed ones by default, every stored event with --all.
import { replayEvents } from '../billing/events.js';
import { createBillingHandlers } from '../billing/handlers.js';
import { bootstrapCommand, option } from './bootstrap.js';

const argv = process.argv.slice(2);
const context = await bootstrapCommand();
try {
  const id = option(argv, 'id');
  const handlers = createBillingHandlers({
    plans: context.config.billingPlans,
    appUrl: context.config.appUrl,
  });
  const result = await replayEvents(context.pool, handlers, context.logger, {
    all: argv.includes('--all') || id !== undefined,
    ...(id ? { ids: [id] } : {}),
  });
  process.stdout.write(`replayed ${result.replayed} event(s), ${result.failed} failed\n`);
  process.exitCode = result.failed > 0 ? 1 : 0;
} finally {
  await context.close();
}
