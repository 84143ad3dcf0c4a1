import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

test('sign up then sign in with supabase-js', async () => {
  const supabase = server.client();
  const { data, error } = await supabase.auth.signUp({
    email: 'Smoke@Example.com',
    password: 'correct horse',
  });
  expect(error).toBeNull();
  expect(data.session?.access_token).toBeTruthy();
  const signIn = await supabase.auth.signInWithPassword({
    email: 'smoke@example.com',
    password: 'correct horse',
  });
  expect(signIn.error).toBeNull();
  expect(signIn.data.user?.email).toBe('smoke@example.com');
});
