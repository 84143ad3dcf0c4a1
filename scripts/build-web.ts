// In charge of `npm run build`: an unconditional production build of the web app, the same
// build `npm start` makes on its own when there is none or it is out of date.
import { buildWebApp } from '../src/server/web.js';

await buildWebApp(process.cwd());
