// `npm run digest -- --frequency daily|weekly`: runs a digest by hand, showing progress, with the
// same exactly-once guarantees as the scheduled run (a second run in the same period sends nothing).
import { plural } from '../digest/compose.js';
import { runDigest } from '../digest/run.js';
import { FREQUENCIES, type Frequency } from '../digest/frequency.js';
import { createUnsubscribeKey } from '../digest/unsubscribe-token.js';
import { bootstrapCommand, option } from './bootstrap.js';

const frequency = option(process.argv.slice(2), 'frequency');
if (!FREQUENCIES.includes(frequency as Frequency)) {
  process.stderr.write('usage: npm run digest -- --frequency daily|weekly\n');
  process.exit(2);
}

const context = await bootstrapCommand();
try {
  const started = performance.now();
  const interactive = process.stdout.isTTY;
  const result = await runDigest(
    {
      pool: context.pool,
      appUrl: context.config.appUrl,
      unsubscribeKey: createUnsubscribeKey(context.config.jwtSecret),
      productName: context.config.authEmail.productName,
    },
    frequency as Frequency,
    {
      onProgress: ({ scanned, sent }) => {
        const line = `examined ${plural(scanned, 'user')}, queued ${plural(sent, 'digest')}`;
        if (interactive) process.stdout.write(`\r${line}`);
        else process.stdout.write(`${line}\n`);
      },
    },
  );
  if (interactive) process.stdout.write('\n');
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `${frequency} digest for the period starting ${result.periodStart}: ${result.sent} queued, ${plural(result.scanned, 'user')} examined, ${seconds} s\n`,
  );
  if (!context.config.smtpUrl)
    process.stdout.write('No SMTP_URL: the e-mails wait in the outbox (development mailbox).\n');
} finally {
  await context.close();
}
