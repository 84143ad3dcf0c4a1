// In charge of the product mark every e-mail shows: a 64 px PNG sent with the message as an
// inline attachment and referenced by its Content-ID, so mail clients show it without fetching
// anything remote (decision 0083). The development mailbox shows the same bytes as a data URL.

/** The Content-ID the HTML names (src="cid:...") and the delivery attaches. */
export const LOGO_CID = 'logo@tenantry';
export const LOGO_SRC = `cid:${LOGO_CID}`;

const LOGO_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAYAAACqaXHeAAAAo0lEQVR42u3bOw6AIABEQY5l7+29lHY2RoOfGGCHhAO8qSjYUirPPC1rT7d8dXoL/wyi9/BXEKPF30IYNb4KYfT4S4SU+FOEaIC0+ANCNEBq/I4AAAAAAAAe3lYOAAAAAAAAAABA8y/BP4IAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAH6IAAAAAID/wn6L2wxYjNgNpS/HDCdNZ42nMyBquzZFxnALUwbVAgAAAABJRU5ErkJggg==';

export function logoPng(): Buffer {
  return Buffer.from(LOGO_BASE64, 'base64');
}

export function logoDataUrl(): string {
  return `data:image/png;base64,${LOGO_BASE64}`;
}
