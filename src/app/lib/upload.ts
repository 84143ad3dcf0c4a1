// In charge of sending one file from the browser to a signed storage upload address, with its
// progress (XMLHttpRequest: fetch cannot report an upload's progress), and of turning storage's
// refusal into words for the person. The address was signed by a server action for the signed-in
// user, so the session's token never reaches script.

export type SendResult = { ok: true } | { ok: false; error: string };

/** Storage's answer to a refused upload, as the person should read it. */
function refusal(status: number, body: string): string {
  let statusCode = String(status);
  let message = '';
  try {
    const parsed = JSON.parse(body) as { statusCode?: unknown; message?: unknown };
    if (typeof parsed.statusCode === 'string') statusCode = parsed.statusCode;
    if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    // not storage's body (a proxy's page): the status says enough
  }
  if (statusCode === '413') {
    return /plan/i.test(message)
      ? "The workspace's plan has no room for this file; delete files or upgrade the plan"
      : 'The file is larger than this place takes';
  }
  if (statusCode === '415') return 'Files of this type cannot be added here';
  if (statusCode === '403') return 'Not allowed: your role does not let you add files here';
  if (statusCode === '409') return 'A file of this name is already here; try again';
  return 'The file could not be sent; try again';
}

/** JSON as storage takes it in a header: base64 of its UTF-8 bytes. */
function base64Json(value: unknown): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(JSON.stringify(value))) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Sends `file` to `url` (PUT, its own type), reporting the fraction sent; resolves once storage answered. */
export function sendFile(
  url: string,
  file: Blob,
  onProgress: (fraction: number) => void,
  metadata?: Record<string, string>,
): Promise<SendResult> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    if (metadata) xhr.setRequestHeader('x-metadata', base64Json(metadata));
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve({ ok: true });
      } else resolve({ ok: false, error: refusal(xhr.status, xhr.responseText) });
    };
    xhr.onerror = () => resolve({ ok: false, error: 'The connection was lost while sending; try again' });
    xhr.onabort = () => resolve({ ok: false, error: 'Cancelled' });
    xhr.send(file);
  });
}
