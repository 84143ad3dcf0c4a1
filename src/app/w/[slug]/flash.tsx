// The one-line outcome of the last action on a page: a notice, or a refusal shown as such.
export function Flash({ searchParams }: { searchParams: Record<string, string | undefined> }) {
  if (searchParams.error) {
    return (
      <p role="alert" className="error">
        {searchParams.error}
      </p>
    );
  }
  if (searchParams.notice) return <p role="status">{searchParams.notice}</p>;
  return null;
}
