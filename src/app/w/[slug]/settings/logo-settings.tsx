'use client';
// The workspace's logo for admins and owners: the current one (or the initial shown instead),
// choosing and cropping a new one, and removing it (asks first). Members see it in the switcher
// and the workspace's header.
import { Trash2 } from 'lucide-react';
import { prepareLogoUpload, removeLogoAction, saveLogoAction } from '@/app/actions/files';
import { ConfirmAction } from '@/app/components/confirm-action';
import { PictureUpload } from '@/app/components/picture-upload';
import { Button } from '@/app/components/ui/button';

export function LogoSettings({
  workspace,
  hasLogo,
  maxBytes,
}: {
  workspace: { id: string; slug: string; name: string };
  hasLogo: boolean;
  maxBytes: number;
}) {
  return (
    <div className="grid max-w-xl grid-cols-1 gap-3">
      <PictureUpload
        what="logo"
        maxBytes={maxBytes}
        prepare={(file) => prepareLogoUpload(workspace.id, file)}
        save={(path) => saveLogoAction(workspace.id, workspace.slug, path)}
      />
      {hasLogo ? (
        <div>
          <ConfirmAction
            trigger={
              <Button variant="outline" size="sm">
                <Trash2 aria-hidden="true" />
                Remove logo
              </Button>
            }
            title={`Remove the logo of ${workspace.name}?`}
            description="Its initial is shown instead, to every member."
            confirmLabel="Remove logo"
            pendingLabel="Removing…"
            action={removeLogoAction}
            fields={{ slug: workspace.slug, workspace_id: workspace.id }}
          />
        </div>
      ) : null}
    </div>
  );
}
