// Sign-in page. The form and its server action arrive with the web application; until then it
// points API users at the identity endpoint.
export const metadata = { title: 'Sign in' };

export default function SignInPage() {
  return (
    <>
      <h1>Sign in</h1>
      <p className="muted">
        The sign-in form is coming with the web application. Meanwhile, sign in through the API:{' '}
        <code>POST /auth/v1/token?grant_type=password</code>.
      </p>
    </>
  );
}
