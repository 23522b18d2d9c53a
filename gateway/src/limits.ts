// Session limits per replica and per user. A session takes a slot once authorized and gives it back when it ends.
export class SessionLimits {
  private total = 0;
  private readonly perUser = new Map<string, number>();

  constructor(
    private readonly maxSessions: number,
    private readonly maxPerUser: number,
  ) {}

  /** Takes a slot, or returns why not. */
  admit(user: string): string | null {
    const mine = this.perUser.get(user) ?? 0;
    if (this.total >= this.maxSessions) return `this gateway replica is at its limit of ${this.maxSessions} sessions`;
    if (mine >= this.maxPerUser) return `${user} already has ${mine} sessions (limit ${this.maxPerUser})`;
    this.total++;
    this.perUser.set(user, mine + 1);
    return null;
  }

  release(user: string): void {
    this.total--;
    const left = (this.perUser.get(user) ?? 1) - 1;
    if (left > 0) this.perUser.set(user, left);
    else this.perUser.delete(user);
  }
}
