import { PrincipalKind, type Principal } from './principal';

/** The two kinds of principal that speak for themselves: in rooms, in messages, and as those an agent is shared with. */
export const ParticipantType = {
  AGENT: 'AGENT',
  HUMAN: 'HUMAN',
} as const;
export type ParticipantType = (typeof ParticipantType)[keyof typeof ParticipantType];

/**
 * A human or an agent, typed: a human's `sub` may equal an agentId, and neither may then act as
 * the other. The wire shape of senders, participants in frames, and `sharedWith` entries.
 */
export interface ParticipantRef {
  type: ParticipantType;
  id: string;
}

/** The participant a principal acts as: humans and agents only; admin and service keys are no one's voice. */
export function participantOf(principal: Principal): ParticipantRef | undefined {
  if (principal.kind === PrincipalKind.HUMAN) return { type: ParticipantType.HUMAN, id: principal.id };
  if (principal.kind === PrincipalKind.AGENT) return { type: ParticipantType.AGENT, id: principal.id };
  return undefined;
}

export const participantKey = (participant: ParticipantRef): string => `${participant.type}:${participant.id}`;

export const sameParticipant = (a: ParticipantRef, b: ParticipantRef): boolean => a.type === b.type && a.id === b.id;
