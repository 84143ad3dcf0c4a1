'use client';
// A project's files: the list (name, size, who added it, when; each a download), and for members
// adding files (several at once, chosen or dropped onto the list) with a progress bar each, and
// deleting one (asks first). Each file is checked against the bucket's types and size and the
// plan's bytes left before a byte is sent, and again by storage; a refused file says why beside
// its name while the others go on. Files travel straight from the browser to storage, to an
// address a server action signed for the signed-in user.
import { File as FileIcon, FileUp, Trash2, X } from 'lucide-react';
import { useRouter } from 'next/navigation';
import { useId, useRef, useState, type DragEvent } from 'react';
import { toast } from 'sonner';
import { deleteProjectFileAction, prepareProjectUploads } from '@/app/actions/files';
import { ConfirmAction } from '@/app/components/confirm-action';
import { RelativeTime } from '@/app/components/relative-time';
import { Button } from '@/app/components/ui/button';
import { cn } from '@/app/components/ui/cn';
import { formatBytes, refusalFor, type UploadLimits } from '@/app/lib/file-checks';
import { sendFile } from '@/app/lib/upload';
import { count } from '@/server/text/counts';

export interface ListedFile {
  name: string;
  fileName: string;
  size: number;
  uploadedBy: string | null;
  uploadedAt: string;
  downloadUrl: string | null;
}

interface Sending {
  key: string;
  fileName: string;
  size: number;
  /** 0..1 while sending; null while waiting */
  progress: number | null;
  error: string | null;
  done: boolean;
}

/** Files sent at once: two keep the link busy without starving the page's own requests. */
const PARALLEL = 2;

function Outcome({ kind, text }: { kind: 'notice' | 'error'; text: string }) {
  return (
    <span
      role={kind === 'error' ? 'alert' : 'status'}
      data-flash={kind}
      data-flash-id={`upload-${Date.now()}-${Math.random().toString(36).slice(2)}`}
    >
      {text}
    </span>
  );
}

export function ProjectFiles({
  slug,
  workspaceId,
  projectId,
  canWrite,
  files,
  more,
  limits,
}: {
  slug: string;
  workspaceId: string;
  projectId: string;
  canWrite: boolean;
  files: ListedFile[];
  more: boolean;
  limits: UploadLimits;
}) {
  const id = useId();
  const router = useRouter();
  const input = useRef<HTMLInputElement>(null);
  const [sending, setSending] = useState<Sending[]>([]);
  const [over, setOver] = useState(false);
  const busy = sending.some((s) => !s.done && !s.error);

  const update = (key: string, change: Partial<Sending>) =>
    setSending((all) => all.map((s) => (s.key === key ? { ...s, ...change } : s)));

  async function add(chosen: File[]) {
    if (chosen.length === 0) return;
    const batch = chosen.map((file, i) => ({
      file,
      key: `${Date.now()}-${i}-${file.name}`,
      refused: refusalFor(limits, file.size, file.type),
    }));
    setSending((all) => [
      ...all.filter((s) => !s.done),
      ...batch.map(({ file, key, refused }) => ({
        key,
        fileName: file.name,
        size: file.size,
        progress: null,
        error: refused,
        done: false,
      })),
    ]);
    const allowed = batch.filter((b) => !b.refused);
    let added = 0;
    let failed = batch.length - allowed.length;
    if (allowed.length > 0) {
      const prepared = await prepareProjectUploads(
        workspaceId,
        projectId,
        allowed.map(({ file }) => ({ name: file.name, size: file.size, type: file.type })),
      ).catch(() => ({ error: 'The files could not be sent; reload the page and try again' }));
      if ('error' in prepared) {
        for (const b of allowed) update(b.key, { error: prepared.error });
        failed += allowed.length;
      } else {
        const queue = allowed.map((b, i) => ({ ...b, target: prepared[i]! }));
        const worker = async () => {
          for (let next = queue.shift(); next; next = queue.shift()) {
            const { file, key, target } = next;
            if (!target.ok) {
              update(key, { error: target.error });
              failed++;
              continue;
            }
            update(key, { progress: 0 });
            const sent = await sendFile(target.url, file, (progress) => update(key, { progress }), {
              name: file.name,
            });
            if (sent.ok) {
              update(key, { done: true, progress: 1 });
              added++;
            } else {
              update(key, { error: sent.error });
              failed++;
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
      }
    }
    if (added > 0) {
      router.refresh();
      toast.success(
        <Outcome kind="notice" text={added === 1 ? 'File added' : `${count(added, 'file')} added`} />,
      );
    }
    if (failed > 0) {
      toast.error(
        <Outcome
          kind="error"
          text={
            failed === 1
              ? 'A file was not added; see why beside it'
              : `${count(failed, 'file')} were not added; see why beside them`
          }
        />,
      );
    }
  }

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    if (canWrite) void add([...event.dataTransfer.files]);
  };

  const pending = sending.filter((s) => !s.done);
  return (
    <div
      className={cn(
        'grid grid-cols-1 gap-4 rounded-md',
        over && 'outline-2 outline-offset-4 outline-primary outline-dashed',
      )}
      data-file-drop={canWrite ? '' : undefined}
      onDragOver={
        canWrite
          ? (event) => {
              event.preventDefault();
              setOver(true);
            }
          : undefined
      }
      onDragLeave={canWrite ? () => setOver(false) : undefined}
      onDrop={canWrite ? onDrop : undefined}
    >
      {canWrite ? (
        <div className="flex flex-wrap items-center gap-3 rounded-md border border-dashed border-input px-4 py-4 text-sm">
          <input
            ref={input}
            id={`${id}-files`}
            type="file"
            multiple
            className="sr-only"
            aria-describedby={`${id}-hint`}
            onChange={(event) => {
              void add([...(event.target.files ?? [])]);
              event.target.value = '';
            }}
          />
          <Button asChild>
            <label htmlFor={`${id}-files`} className="cursor-pointer">
              <FileUp aria-hidden="true" />
              Add files
            </label>
          </Button>
          <span id={`${id}-hint`} className="text-muted-foreground">
            or drop them on this list. Up to {formatBytes(limits.maxBytes)} each
            {limits.planBound ? " (what the workspace's plan has left)" : ''}.
          </span>
        </div>
      ) : (
        <p className="text-sm text-muted-foreground">Viewers download files; members add and delete them.</p>
      )}

      {pending.length > 0 ? (
        <ul aria-label="Files being added" className="grid grid-cols-1 gap-2" aria-live="polite">
          {pending.map((s) => (
            <li
              key={s.key}
              className="grid grid-cols-1 gap-1 rounded-md border px-3 py-2 text-sm"
              data-upload={s.fileName}
            >
              <div className="flex items-center gap-2">
                <span className="min-w-0 flex-1 truncate font-medium">{s.fileName}</span>
                <span className="shrink-0 text-muted-foreground">{formatBytes(s.size)}</span>
                {s.error ? (
                  <Button
                    variant="ghost"
                    size="icon"
                    aria-label={`Dismiss ${s.fileName}`}
                    onClick={() => setSending((all) => all.filter((x) => x.key !== s.key))}
                  >
                    <X aria-hidden="true" />
                  </Button>
                ) : null}
              </div>
              {s.error ? (
                <p role="alert" data-upload-error="" className="font-medium text-danger-text">
                  {s.error}
                </p>
              ) : (
                <>
                  <label htmlFor={`${id}-${s.key}`} className="text-muted-foreground">
                    {s.progress === null ? 'Waiting…' : `Sending… ${Math.round(s.progress * 100)}%`}
                  </label>
                  <progress
                    id={`${id}-${s.key}`}
                    max={1}
                    value={s.progress ?? 0}
                    className="h-2 w-full accent-primary"
                  />
                </>
              )}
            </li>
          ))}
        </ul>
      ) : null}

      {files.length === 0 ? (
        <div className="rounded-md border border-dashed px-6 py-10 text-center">
          <FileIcon className="mx-auto size-8 text-muted-foreground" aria-hidden="true" />
          <p className="mt-3 text-sm font-medium">No files yet</p>
          <p className="mt-1 text-sm text-muted-foreground">
            {canWrite
              ? 'Add the project’s documents here; everyone in the workspace can download them.'
              : 'When members add files, they appear here.'}
          </p>
        </div>
      ) : (
        <ul aria-label="Files" className="divide-y rounded-md border" aria-busy={busy}>
          {files.map((f) => (
            <li key={f.name} className="flex items-center gap-3 px-3 py-2 sm:px-4" data-file={f.fileName}>
              <span
                aria-hidden="true"
                className="inline-flex size-8 shrink-0 items-center justify-center rounded-md bg-primary/10 text-primary"
              >
                <FileIcon className="size-4" />
              </span>
              <span className="min-w-0 flex-1">
                {f.downloadUrl ? (
                  <a
                    href={f.downloadUrl}
                    download={f.fileName}
                    className="block truncate text-sm font-medium underline-offset-4 hover:underline"
                  >
                    {f.fileName}
                    <span className="sr-only"> (download, {formatBytes(f.size)})</span>
                  </a>
                ) : (
                  <span className="block truncate text-sm font-medium">{f.fileName}</span>
                )}
                <span className="block truncate text-xs text-muted-foreground">
                  {formatBytes(f.size)} · added by {f.uploadedBy ?? 'a former member'}{' '}
                  <RelativeTime date={f.uploadedAt} />
                </span>
              </span>
              {canWrite ? (
                <ConfirmAction
                  trigger={
                    <Button variant="ghost" size="icon" aria-label={`Delete ${f.fileName}`}>
                      <Trash2 aria-hidden="true" />
                    </Button>
                  }
                  title={`Delete ${f.fileName}?`}
                  description="The file is deleted for everyone in the workspace. This cannot be undone."
                  confirmLabel="Delete file"
                  pendingLabel="Deleting…"
                  action={deleteProjectFileAction}
                  fields={{ slug, workspace_id: workspaceId, project_id: projectId, name: f.name }}
                />
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {more ? <p className="text-sm text-muted-foreground">Only the newest files are listed here.</p> : null}
    </div>
  );
}
