'use client';
// The profile picture: the current one (or the initials shown instead), choosing and cropping a
// new one, and removing it (asks first). Teammates see it wherever the initials were.
import { Trash2 } from 'lucide-react';
import { prepareAvatarUpload, removeAvatarAction, saveAvatarAction } from '@/app/actions/files';
import { ConfirmAction } from '@/app/components/confirm-action';
import { PictureUpload } from '@/app/components/picture-upload';
import { Button } from '@/app/components/ui/button';

export function AvatarSettings({ hasPicture, maxBytes }: { hasPicture: boolean; maxBytes: number }) {
  return (
    <section aria-labelledby="profile-picture" className="grid max-w-xl grid-cols-1 gap-3">
      <h3 id="profile-picture" className="text-sm font-medium">
        Profile picture
      </h3>
      <PictureUpload
        what="picture"
        round
        maxBytes={maxBytes}
        prepare={prepareAvatarUpload}
        save={saveAvatarAction}
      />
      {hasPicture ? (
        <div>
          <ConfirmAction
            trigger={
              <Button variant="outline" size="sm">
                <Trash2 aria-hidden="true" />
                Remove picture
              </Button>
            }
            title="Remove your profile picture?"
            description="Your initials are shown instead, to you and your teammates."
            confirmLabel="Remove picture"
            pendingLabel="Removing…"
            action={removeAvatarAction}
            fields={{}}
          />
        </div>
      ) : null}
    </section>
  );
}
