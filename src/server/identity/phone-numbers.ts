// In charge of reading phone numbers as GoTrue does: a leading + and spaces dropped, E.164 digits
// (validatePhone's words when not), and, beyond GoTrue, a number libphonenumber-js can tell is
// impossible for its country is refused too, so no code is ever sent to a number that cannot exist.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { errors } from './errors.js';

const E164_DIGITS = /^[1-9][0-9]{1,14}$/;

/** The number as stored and compared: E.164 digits without the +, or a 400 validation_failed. */
export function normalizePhone(raw: string): string {
  const digits = raw.trim().replace(/^\+/, '').replaceAll(' ', '');
  if (!E164_DIGITS.test(digits)) throw errors.validation('Invalid phone number format (E.164 required)');
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  // A length no number of its country has: not a phone number, whatever the digits.
  if (!parsed || !parsed.isPossible()) {
    throw errors.validation('Invalid phone number format (E.164 required)');
  }
  return parsed.number.slice(1);
}
