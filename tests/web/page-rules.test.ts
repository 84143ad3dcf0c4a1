// Rules the pages follow without a database: the activity feed's sentences (people named, "you"
// for the viewer, renames told as such, never an internal action name), and which member
// controls each role is offered (never above the viewer's own role, nothing on owners unless an
// owner, nothing on the last owner, nothing on oneself).
import { expect, test } from 'vitest';
import { describe as sentence, type ActivityEvent } from '../../src/app/lib/queries/activity.js';
import { allowedControls, invitableRoles } from '../../src/app/lib/queries/members.js';

const ada = '00000000-0000-4000-8000-00000000000a';
const grace = '00000000-0000-4000-8000-00000000000b';
const alan = '00000000-0000-4000-8000-00000000000c';
const names = new Map([
  [ada, 'Ada Lovelace'],
  [grace, 'Grace Hopper'],
]);

const event = (action: string, subject: string | null, data: Record<string, unknown> = {}, actorId = ada) =>
  ({
    id: '1',
    action,
    subject,
    data,
    createdAt: new Date(),
    actorId,
    previousSubject: null,
  }) as ActivityEvent;

test('activity reads as sentences about people, also after they left', () => {
  expect(
    sentence(
      event('member.role_changed', 'grace@example.com', {
        user_id: grace,
        old_role: 'member',
        role: 'admin',
      }),
      names,
      alan,
    ),
  ).toBe('changed Grace Hopper’s role from member to admin');
  expect(
    sentence(
      event('member.role_changed', 'alan@example.com', { user_id: alan, old_role: 'viewer', role: 'member' }),
      names,
      alan,
    ),
  ).toBe('changed your role from viewer to member');
  // Someone no longer visible is named by the address the event kept.
  expect(sentence(event('member.removed', 'old@example.com', { user_id: alan }), names, ada)).toBe(
    'removed old@example.com from the workspace',
  );
  expect(
    sentence(event('member.added', 'ada@example.com', { user_id: ada, role: 'owner' }), names, ada),
  ).toBe('joined as owner');
  expect(
    sentence(
      event('workspace.updated', 'Artemis', {
        old_name: 'Apollo',
        name: 'Artemis',
        old_slug: 'apollo',
        slug: 'apollo',
      }),
      names,
      ada,
    ),
  ).toBe('renamed the workspace Apollo to Artemis');
  expect(sentence({ ...event('project.updated', 'Engine 2'), previousSubject: 'Engine' }, names, ada)).toBe(
    'renamed the project Engine to Engine 2',
  );
  for (const action of ['member.role_changed', 'member.removed', 'invitation.created', 'project.deleted'])
    expect(
      sentence(event(action, 'x', { user_id: grace, role: 'admin', old_role: 'member' }), names, ada),
    ).not.toMatch(/[a-z]+\.[a-z_]+|role_changed/);
});

test('members are offered only the controls the database would allow', () => {
  const owners = 1;
  const target = (role: 'owner' | 'admin' | 'member' | 'viewer', userId = alan) => ({ userId, role });
  // An admin: up to admin, on members and viewers; nothing on owners or themselves.
  expect(allowedControls({ userId: grace, role: 'admin' }, target('member'), owners)).toEqual({
    roles: ['viewer', 'member', 'admin'],
    remove: true,
  });
  expect(allowedControls({ userId: grace, role: 'admin' }, target('owner'), 2)).toEqual({
    roles: [],
    remove: false,
  });
  expect(allowedControls({ userId: grace, role: 'admin' }, target('admin', grace), owners).roles).toEqual([]);
  // An owner: every role, also on another owner when there are two; never on the last owner.
  expect(allowedControls({ userId: ada, role: 'owner' }, target('owner'), 2)).toEqual({
    roles: ['viewer', 'member', 'admin', 'owner'],
    remove: true,
  });
  expect(allowedControls({ userId: ada, role: 'owner' }, target('owner', ada), 1)).toEqual({
    roles: [],
    remove: false,
  });
  // Members and viewers: nothing.
  for (const role of ['member', 'viewer'] as const)
    expect(allowedControls({ userId: grace, role }, target('viewer'), owners)).toEqual({
      roles: [],
      remove: false,
    });
  expect(invitableRoles('admin')).toEqual(['viewer', 'member', 'admin']);
});
