// PostCSS for the web app: Tailwind CSS v4 compiles src/app/globals.css at build time (nothing
// is fetched at build or run time).
const config = { plugins: { '@tailwindcss/postcss': {} } };

export default config;
