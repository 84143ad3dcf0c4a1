// In charge of the form fields server actions share, with messages written for people: a field
// a person fills in says what to fix; a hidden field that is wrong means the page is stale.
import { z } from 'zod';

const STALE = 'This page is out of date; reload it and try again';

export const slugField = z.string({ error: STALE }).regex(/^[a-z0-9-]{1,48}$/, { error: STALE });
export const idField = z.uuid({ error: STALE });
export const roleField = z.enum(['viewer', 'member', 'admin', 'owner'], { error: 'Choose a role' });

export const workspaceName = z
  .string({ error: 'Give the workspace a name' })
  .trim()
  .min(1, 'Give the workspace a name')
  .max(100, 'Use at most 100 characters');

export const projectName = z
  .string({ error: 'Give the project a name' })
  .trim()
  .min(1, 'Give the project a name')
  .max(200, 'Use at most 200 characters');

export const emailField = z
  .string({ error: 'Enter an e-mail address' })
  .trim()
  .min(1, 'Enter an e-mail address')
  .pipe(z.email({ error: 'Enter a valid e-mail address, like ada@example.com' }));

export const newSlugField = z
  .string({ error: 'Choose an address' })
  .trim()
  .toLowerCase()
  .min(1, 'Choose an address')
  .max(48, 'Use at most 48 characters')
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, {
    error: 'Use lowercase letters, digits and dashes, not starting or ending with a dash',
  });
