import { useState } from 'preact/hooks';
import { ok, type ApiClient, type PageProps, type Schemas } from '../client';
import { Field, SelectField } from '../fields';
import { optionsOf } from '../values';
import { Action, ErrorBanner, ShownOnce, Table, useLoad, when } from '../ui';
import { FormError } from '../forms';

type Role = Schemas['TeamRole'];
/** Every role of the document, each in words: a Record of them all, so a role the document adds fails to compile here. */
const ROLE_WORDS: Record<Role, string> = {
  OWNER: 'Owner: everything, including members and keys',
  ADMIN: 'Admin: everything except members and keys',
  FINANCE: 'Finance: payouts, the review queue and reports',
  ANALYST: 'Analyst: read-only',
};
export const ROLE_OPTIONS = optionsOf(ROLE_WORDS);

/**
 * The program's team: every member may see who is on it; an owner invites people (a single-use link
 * to hand over, since there is no mail service), changes roles and removes members. The API's
 * refusals (the last owner, say) are shown as it words them.
 */
export function Team({ client, can }: PageProps) {
  const team = useLoad(() => ok(client.GET('/api/v1/team/members')), []);
  return (
    <section>
      <h1>Team</h1>
      <ErrorBanner error={team.error} />
      <Table
        caption="Members"
        rows={team.value?.members ?? []}
        columns={[
          { title: 'Email', value: (member) => member.email },
          { title: 'Role', value: (member) => member.role },
          { title: 'Second factor', value: (member) => (member.totpEnabled ? 'on' : 'off') },
          { title: 'Joined', value: (member) => when(member.createdAt) },
          { title: 'Last sign-in', value: (member) => when(member.lastSignInAt) },
          ...(can('changeTeamMemberRole') || can('removeTeamMember')
            ? [
                {
                  title: 'Change',
                  value: (member: Schemas['TeamMember']) => (
                    <MemberChanges key={member.id} client={client} can={can} member={member} onChanged={team.reload} />
                  ),
                },
              ]
            : []),
        ]}
      />
      <InviteTable caption="Invites not accepted yet" invites={team.value?.invites ?? []} />
      {can('inviteTeamMember') ? <InviteForm client={client} onInvited={team.reload} /> : null}
    </section>
  );
}

/** Invites neither accepted nor expired: who, with which role, until when the link works. */
export function InviteTable({ caption, invites }: { caption: string; invites: Schemas['TeamInvite'][] }) {
  return (
    <Table
      caption={caption}
      rows={invites}
      empty="No invite is waiting."
      columns={[
        { title: 'Email', value: (invite) => invite.email },
        { title: 'Role', value: (invite) => invite.role },
        { title: 'Link works until', value: (invite) => when(invite.expiresAt) },
      ]}
    />
  );
}

function MemberChanges({ client, can, member, onChanged }: PageProps & { member: Schemas['TeamMember']; onChanged: () => void }) {
  const [role, setRole] = useState<Role>(member.role);
  return (
    <div class="member-changes">
      {can('changeTeamMemberRole') ? (
        <>
          <SelectField
            id={`role-${member.id}`}
            label={`New role of ${member.email}`}
            param="role"
            error={null}
            value={role}
            onValue={setRole}
            options={ROLE_OPTIONS}
          />
          <Action
            label={`Change role of ${member.email}`}
            run={async () => {
              await ok(client.PUT('/api/v1/team/members', { body: { id: member.id, role } }));
              onChanged();
            }}
          />
        </>
      ) : null}
      {can('removeTeamMember') ? (
        <Action
          label={`Remove ${member.email}`}
          kind="danger"
          run={async () => {
            await ok(client.DELETE('/api/v1/team/members', { body: { id: member.id } }));
            onChanged();
          }}
        />
      ) : null}
    </div>
  );
}

function InviteForm({ client, onInvited }: { client: ApiClient; onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('ANALYST');
  const [error, setError] = useState<unknown>(null);
  const [invited, setInvited] = useState<Schemas['TeamInviteCreated'] | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setInvited(null);
    try {
      setInvited(await ok(client.POST('/api/v1/team/members', { body: { email: email.trim(), role } })));
      setEmail('');
      onInvited();
    } catch (failed) {
      setError(failed);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a member</h2>
      <Field id="invite-email" label="Email" type="email" autocomplete="off" param="email" error={error} value={email} onValue={setEmail} />
      <SelectField id="invite-role" label="Role" param="role" error={error} value={role} onValue={setRole} options={ROLE_OPTIONS} />
      <button type="submit">Invite</button>
      <FormError error={error} params={['email', 'role']} />
      {invited ? (
        <ShownOnce
          label={`Invite link for ${invited.invite.email} (${invited.invite.role}): give it to them; it works once, until ${when(invited.invite.expiresAt)}`}
          value={invited.inviteUrl}
        />
      ) : null}
    </form>
  );
}
