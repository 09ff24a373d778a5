import { subjectToken } from '../config/live-stream';

/** Where the frames of one namespace and task queue go: a subject per session, and one for the fleet's hellos. */
export class NatsSubjects {
  constructor(readonly prefix: string) {}

  /** The session's id as one safe token: ids may hold `.`, `*`, `>` or spaces, which a subject gives meaning to. */
  session(sessionId: string): string {
    return `${this.prefix}.session.${subjectToken(sessionId)}`;
  }

  get hello(): string {
    return `${this.prefix}.hello`;
  }
}
