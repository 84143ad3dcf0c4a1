// Types for the one pg internal we use: the driver's own conversion of a JavaScript value to the
// text it sends as a parameter (arrays become array literals, objects JSON, dates ISO text).
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}
