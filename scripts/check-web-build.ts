// In charge of refusing an installation (the container image's last build step) whose web build
// `npm start` would consider out of date and build again at every start.
import { webBuildIsStale } from '../src/server/web.js';

if (webBuildIsStale(process.cwd())) {
  process.stderr.write(
    'the web build in .next is missing or older than its sources (src, next.config.ts, tsconfig.json, ' +
      'package-lock.json, …): copy them with their modification times, or run `npm run build` last\n',
  );
  process.exit(1);
}
process.stdout.write('the web build is up to date with its sources\n');
