// In charge of letting Turbopack bundle our server modules: they import each other as
// './module.js' (the specifier Node's ESM resolution and tsx expect), and Turbopack, unlike
// webpack's resolve.extensionAlias, does not map such a specifier to './module.ts'
// (vercel/next.js#82945). Dropping the extension from relative specifiers lets Turbopack
// resolve them as TypeScript. Remove this loader once Turbopack can alias extensions itself.

// `from './x.js'`, `import './x.js'`, `import('./x.js')`: relative specifiers only, so package
// imports such as 'bn.js' are never touched.
const RELATIVE_JS_SPECIFIER = /(\b(?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"\n]*?)\.js\2/g;

/** @param {string} source */
export default function jsSpecifiersLoader(source) {
  return source.replace(RELATIVE_JS_SPECIFIER, '$1$2$3$2');
}
