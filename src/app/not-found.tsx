// The page shown for any address that does not exist (or that the visitor may not see).
import Link from 'next/link';

export default function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p className="muted">There is nothing here, or you do not have access to it.</p>
      <p>
        <Link href="/">Back to the start</Link>
      </p>
    </>
  );
}
