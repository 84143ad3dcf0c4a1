// The flash message cookie's name and lifetime, apart from the signing code so the browser-side
// script that clears the cookie can know its name without pulling in node:crypto.
export const FLASH_COOKIE = 'tenantry-flash';
/** Long enough to survive the redirect to the next page; the page clears it once shown. */
export const FLASH_MAX_AGE_SECONDS = 60;
