// Sign-up page. The form and its server action arrive with the web application; until then it
// points API users at the identity endpoint.
export const metadata = { title: 'Create an account' };

export default function SignUpPage() {
  return (
    <>
      <h1>Create an account</h1>
      <p className="muted">
        The sign-up form is coming with the web application. Meanwhile, sign up through the API:{' '}
        <code>POST /auth/v1/signup</code>.
      </p>
    </>
  );
}
