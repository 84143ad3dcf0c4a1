// In charge of choosing a workspace role in a form (inviting someone, creating an API key): a
// labelled menu of the roles the viewer may grant, its error tied to it for screen readers.
import { FieldError } from '@/app/components/ui/field';
import { Label, Select } from '@/app/components/ui/input';

export function RoleSelect({
  id,
  roles,
  defaultValue,
  error,
}: {
  id: string;
  /** only the roles the viewer may grant, lowest first */
  roles: string[];
  defaultValue: string;
  error?: string | undefined;
}) {
  return (
    <div className="grid grid-cols-1 gap-2">
      <Label htmlFor={id}>Role</Label>
      <Select
        id={id}
        name="role"
        defaultValue={defaultValue}
        aria-describedby={error ? `${id}-error` : undefined}
      >
        {roles.map((r) => (
          <option key={r} value={r}>
            {r[0]!.toUpperCase() + r.slice(1)}
          </option>
        ))}
      </Select>
      <FieldError id={`${id}-error`}>{error}</FieldError>
    </div>
  );
}
