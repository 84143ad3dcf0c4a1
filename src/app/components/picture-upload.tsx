'use client';
// Choosing a picture (a profile picture, a workspace logo): pick one or drop it on the area, crop
// it square in the browser, and send the crop to storage through an address a server action
// signed; then a second action makes it the current picture. The crop is drawn onto a canvas at
// PICTURE_SIZE pixels, so what is stored is small, square and a plain bitmap whatever was chosen.
// The cropper is ours: the picture moves by dragging or with the arrow keys (Shift for big steps),
// and zooms with the slider, the wheel, or + and -; everything it does is said in words too.
import { ImageUp, Minus, Plus } from 'lucide-react';
import { useCallback, useEffect, useId, useRef, useState, useTransition, type KeyboardEvent } from 'react';
import { Button } from '@/app/components/ui/button';
import { cn } from '@/app/components/ui/cn';
import { Spinner } from '@/app/components/ui/spinner';
import { formatBytes } from '@/app/lib/file-checks';
import { sendFile } from '@/app/lib/upload';

type Prepared = { ok: true; url: string; path: string } | { ok: false; error: string };

/** Pixels of the stored square. */
const PICTURE_SIZE = 512;
/** Pixels of the cropping frame on screen. */
const FRAME = 240;
const MAX_ZOOM = 4;
/** Larger files are not opened: decoding them would stall a phone for a picture shown at 32 px. */
const MAX_SOURCE_BYTES = 20 * 1024 * 1024;

interface Crop {
  /** the picture's top-left corner in the frame, in CSS pixels (never positive: it covers the frame) */
  x: number;
  y: number;
  zoom: number;
}

interface Source {
  url: string;
  image: HTMLImageElement;
  name: string;
}

/** The scale that makes the picture's shorter side fill the frame, times the zoom. */
function scaleOf(image: HTMLImageElement, zoom: number): number {
  return (FRAME / Math.min(image.naturalWidth, image.naturalHeight)) * zoom;
}

/** Keeps the frame covered: the picture may not be moved past any of its edges. */
function clamp(image: HTMLImageElement, crop: Crop): Crop {
  const scale = scaleOf(image, crop.zoom);
  const minX = FRAME - image.naturalWidth * scale;
  const minY = FRAME - image.naturalHeight * scale;
  return {
    zoom: crop.zoom,
    x: Math.min(0, Math.max(minX, crop.x)),
    y: Math.min(0, Math.max(minY, crop.y)),
  };
}

/** A new zoom, keeping the point at the frame's centre where it is. */
function zoomTo(image: HTMLImageElement, crop: Crop, zoom: number): Crop {
  const next = Math.min(MAX_ZOOM, Math.max(1, zoom));
  const before = scaleOf(image, crop.zoom);
  const after = scaleOf(image, next);
  const cx = (FRAME / 2 - crop.x) / before;
  const cy = (FRAME / 2 - crop.y) / before;
  return clamp(image, { zoom: next, x: FRAME / 2 - cx * after, y: FRAME / 2 - cy * after });
}

function centred(image: HTMLImageElement): Crop {
  const scale = scaleOf(image, 1);
  return {
    zoom: 1,
    x: (FRAME - image.naturalWidth * scale) / 2,
    y: (FRAME - image.naturalHeight * scale) / 2,
  };
}

/** The crop as a square bitmap: WebP where the browser writes it, PNG otherwise. */
async function render(image: HTMLImageElement, crop: Crop): Promise<Blob> {
  const canvas = document.createElement('canvas');
  canvas.width = PICTURE_SIZE;
  canvas.height = PICTURE_SIZE;
  const context = canvas.getContext('2d');
  if (!context) throw new Error('This browser cannot draw the picture');
  const scale = scaleOf(image, crop.zoom);
  context.imageSmoothingQuality = 'high';
  context.drawImage(
    image,
    -crop.x / scale,
    -crop.y / scale,
    FRAME / scale,
    FRAME / scale,
    0,
    0,
    PICTURE_SIZE,
    PICTURE_SIZE,
  );
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/webp', 0.9));
  if (blob && (blob.type === 'image/webp' || blob.type === 'image/png')) return blob;
  const png = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
  if (!png) throw new Error('This browser cannot draw the picture');
  return png;
}

function loadImage(file: File): Promise<Source> {
  return new Promise((resolve, reject) => {
    const url = URL.createObjectURL(file);
    const image = new Image();
    image.onload = () => resolve({ url, image, name: file.name });
    image.onerror = () => {
      URL.revokeObjectURL(url);
      reject(new Error('This file is not a picture the browser can open; choose a PNG, JPEG or WebP'));
    };
    image.src = url;
  });
}

export function PictureUpload({
  what,
  round = false,
  maxBytes,
  prepare,
  save,
}: {
  /** what the picture is, in the buttons' words: "picture", "logo" */
  what: string;
  /** shown as a circle (a person) rather than a rounded square (a workspace) */
  round?: boolean;
  /** the most bytes the stored picture may have (the bucket's limit) */
  maxBytes: number;
  prepare: (file: { type: string; size: number }) => Promise<Prepared>;
  /** records the uploaded picture; on success it moves on (with a notice), otherwise says why */
  save: (path: string) => Promise<{ error: string } | undefined | void>;
}) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const frame = useRef<HTMLDivElement>(null);
  const drag = useRef<{ pointer: number; x: number; y: number } | null>(null);
  const [source, setSource] = useState<Source | null>(null);
  const [crop, setCrop] = useState<Crop>({ x: 0, y: 0, zoom: 1 });
  const [error, setError] = useState<string | null>(null);
  const [over, setOver] = useState(false);
  const [progress, setProgress] = useState<number | null>(null);
  const [saving, startSaving] = useTransition();
  const busy = saving || progress !== null;
  // A newly opened picture's frame takes the keyboard, so the arrows move it at once.
  const focusFrame = useRef(false);
  useEffect(() => {
    if (source && focusFrame.current) {
      focusFrame.current = false;
      frame.current?.focus();
    }
  }, [source]);

  useEffect(() => () => (source ? URL.revokeObjectURL(source.url) : undefined), [source]);

  const open = useCallback(async (file: File | undefined) => {
    setError(null);
    if (!file) return;
    if (!file.type.startsWith('image/')) {
      setError('This file is not a picture; choose a PNG, JPEG or WebP');
      return;
    }
    if (file.size > MAX_SOURCE_BYTES) {
      setError(`The picture is larger than ${formatBytes(MAX_SOURCE_BYTES)}; choose a smaller one`);
      return;
    }
    try {
      const loaded = await loadImage(file);
      focusFrame.current = true;
      setSource(loaded);
      setCrop(centred(loaded.image));
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);

  const cancel = () => {
    setSource(null);
    setError(null);
    requestAnimationFrame(() => input.current?.focus());
  };

  const upload = () => {
    if (!source) return;
    setError(null);
    startSaving(async () => {
      try {
        const blob = await render(source.image, crop);
        if (blob.size > maxBytes) {
          setError(`The cropped ${what} is larger than ${formatBytes(maxBytes)}; zoom in or choose another`);
          return;
        }
        const prepared = await prepare({ type: blob.type, size: blob.size });
        if (!prepared.ok) {
          setError(prepared.error);
          return;
        }
        setProgress(0);
        const sent = await sendFile(prepared.url, blob, setProgress);
        setProgress(null);
        if (!sent.ok) {
          setError(sent.error);
          return;
        }
        // Uploaded: the cropper closes, and the page moves on once the picture is recorded.
        setSource(null);
        const saved = await save(prepared.path);
        if (saved?.error) setError(saved.error);
      } catch (e) {
        setProgress(null);
        setError((e as Error).message || `The ${what} could not be saved; try again`);
      }
    });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!source) return;
    const step = event.shiftKey ? 40 : 8;
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [step, 0],
      ArrowRight: [-step, 0],
      ArrowUp: [0, step],
      ArrowDown: [0, -step],
    };
    const move = moves[event.key];
    if (move) {
      event.preventDefault();
      setCrop((c) => clamp(source.image, { ...c, x: c.x + move[0], y: c.y + move[1] }));
    } else if (event.key === '+' || event.key === '=') {
      event.preventDefault();
      setCrop((c) => zoomTo(source.image, c, c.zoom + 0.25));
    } else if (event.key === '-' || event.key === '_') {
      event.preventDefault();
      setCrop((c) => zoomTo(source.image, c, c.zoom - 0.25));
    }
  };

  const errorId = `${id}-error`;
  const helpId = `${id}-help`;

  if (!source) {
    return (
      <div className="grid grid-cols-1 gap-2">
        <div
          data-picture-drop=""
          onDragOver={(event) => {
            event.preventDefault();
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={(event) => {
            event.preventDefault();
            setOver(false);
            void open(event.dataTransfer.files[0]);
          }}
          className={cn(
            'flex flex-wrap items-center gap-3 rounded-md border border-dashed border-input px-4 py-4 text-sm',
            over && 'border-primary bg-primary/5',
          )}
        >
          <input
            ref={input}
            id={`${id}-file`}
            type="file"
            accept="image/png,image/jpeg,image/webp,image/gif"
            className="sr-only"
            aria-describedby={error ? `${helpId} ${errorId}` : helpId}
            onChange={(event) => {
              void open(event.target.files?.[0]);
              event.target.value = '';
            }}
          />
          <Button asChild variant="outline">
            <label htmlFor={`${id}-file`} className="cursor-pointer">
              <ImageUp aria-hidden="true" />
              Choose a {what}
            </label>
          </Button>
          <span id={helpId} className="text-muted-foreground">
            or drop one here. You crop it square next.
          </span>
        </div>
        {error ? (
          <p id={errorId} role="alert" data-picture-error="" className="text-sm font-medium text-danger-text">
            {error}
          </p>
        ) : null}
      </div>
    );
  }

  const scale = scaleOf(source.image, crop.zoom);
  return (
    <div className="grid grid-cols-1 gap-3" data-cropper="">
      <p id={helpId} className="text-sm text-muted-foreground">
        Drag the {what} or use the arrow keys to place it in the frame; zoom with the slider or the + and −
        keys.
      </p>
      <div
        ref={frame}
        role="group"
        tabIndex={0}
        aria-roledescription="cropper"
        aria-label={`Crop the ${what}: ${Math.round(crop.zoom * 100)}% zoom`}
        aria-describedby={helpId}
        data-crop-frame=""
        onKeyDown={onKeyDown}
        onWheel={(event) => setCrop((c) => zoomTo(source.image, c, c.zoom - event.deltaY / 500))}
        onPointerDown={(event) => {
          event.currentTarget.setPointerCapture(event.pointerId);
          drag.current = { pointer: event.pointerId, x: event.clientX, y: event.clientY };
        }}
        onPointerMove={(event) => {
          const d = drag.current;
          if (!d || d.pointer !== event.pointerId) return;
          const dx = event.clientX - d.x;
          const dy = event.clientY - d.y;
          drag.current = { pointer: d.pointer, x: event.clientX, y: event.clientY };
          setCrop((c) => clamp(source.image, { ...c, x: c.x + dx, y: c.y + dy }));
        }}
        onPointerUp={() => (drag.current = null)}
        onPointerCancel={() => (drag.current = null)}
        className="relative cursor-grab touch-none overflow-hidden rounded-md bg-muted select-none focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-ring active:cursor-grabbing"
        style={{ width: FRAME, height: FRAME }}
      >
        {/* The picture being cropped: a local file, shown as it is. */}
        <img
          src={source.url}
          alt=""
          draggable={false}
          className="pointer-events-none absolute top-0 left-0 max-w-none origin-top-left"
          style={{
            width: source.image.naturalWidth * scale,
            height: source.image.naturalHeight * scale,
            transform: `translate(${crop.x}px, ${crop.y}px)`,
          }}
        />
        {/* What is kept: the whole square for a logo, the circle inside it for a person. */}
        <span
          aria-hidden="true"
          className={cn(
            'pointer-events-none absolute inset-0 shadow-[0_0_0_9999px_rgb(0_0_0/0.45)] ring-2 ring-white/80',
            round ? 'rounded-full' : 'rounded-md',
          )}
        />
      </div>
      <div className="flex max-w-[15rem] items-center gap-2">
        <Button
          type="button"
          variant="ghost"
          size="icon"
          aria-label="Zoom out"
          onClick={() => setCrop((c) => zoomTo(source.image, c, c.zoom - 0.25))}
          disabled={crop.zoom <= 1}
        >
          <Minus aria-hidden="true" />
        </Button>
        <label htmlFor={`${id}-zoom`} className="sr-only">
          Zoom
        </label>
        <input
          id={`${id}-zoom`}
          type="range"
          min={1}
          max={MAX_ZOOM}
          step={0.05}
          value={crop.zoom}
          aria-valuetext={`${Math.round(crop.zoom * 100)}%`}
          onChange={(event) => setCrop((c) => zoomTo(source.image, c, Number(event.target.value)))}
          className="h-11 min-w-0 flex-1 cursor-pointer accent-primary"
        />
        <Button
          type="button"
          variant="ghost"
          size="icon"
          aria-label="Zoom in"
          onClick={() => setCrop((c) => zoomTo(source.image, c, c.zoom + 0.25))}
          disabled={crop.zoom >= MAX_ZOOM}
        >
          <Plus aria-hidden="true" />
        </Button>
      </div>
      {progress !== null ? (
        <div className="grid max-w-[15rem] gap-1 text-sm">
          <label htmlFor={`${id}-progress`}>Uploading {source.name}</label>
          <progress id={`${id}-progress`} max={1} value={progress} className="w-full accent-primary" />
        </div>
      ) : null}
      {error ? (
        <p id={errorId} role="alert" data-picture-error="" className="text-sm font-medium text-danger-text">
          {error}
        </p>
      ) : null}
      <div className="flex flex-wrap gap-2">
        <Button type="button" onClick={upload} disabled={busy} aria-disabled={busy}>
          {busy ? <Spinner /> : null}
          {busy ? 'Saving…' : `Save ${what}`}
        </Button>
        <Button type="button" variant="outline" onClick={cancel} disabled={busy}>
          Cancel
        </Button>
      </div>
    </div>
  );
}
