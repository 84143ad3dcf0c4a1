// `npm run operator:staff -- add <email>` | `remove <email>` | `list`: who may open the operator
// console (/admin). Staff still need a session that passed a second factor to get in.
import { userInfo } from 'node:os';
import { grantStaff, listStaff, revokeStaff } from '../operator/staff.js';
import { bootstrapCommand } from './bootstrap.js';

const USAGE = 'usage: npm run operator:staff -- add <email> | remove <email> | list\n';
const [verb, email] = process.argv.slice(2);
if (!(verb === 'list' || ((verb === 'add' || verb === 'remove') && email))) {
  process.stderr.write(USAGE);
  process.exit(2);
}

const context = await bootstrapCommand();
try {
  // Recorded with the line: which operating-system account ran the command.
  const by = `command:${userInfo().username}`;
  if (verb === 'list') {
    const staff = await listStaff(context.pool);
    if (staff.length === 0) process.stdout.write('no staff yet\n');
    for (const s of staff) {
      process.stdout.write(`${s.email ?? s.userId}\t${s.grantedAt.toISOString()}\t${s.grantedBy}\n`);
    }
  } else if (verb === 'add') {
    const added = await grantStaff(context.pool, email!, by);
    process.stdout.write(added ? `${email} is now staff\n` : `${email} was already staff\n`);
  } else {
    const removed = await revokeStaff(context.pool, email!, by);
    process.stdout.write(removed ? `${email} is no longer staff\n` : `${email} was not staff\n`);
  }
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await context.close();
}
