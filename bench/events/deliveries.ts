import type { ReceivedEvent, SseSubscriber } from './sse-subscriber';

/**
 * What the streams of one composition received of the reports the bench sent: each report is known
 * by its unique `message`, and each delivery's delay runs from the moment its report was sent.
 */
export class Deliveries {
  private readonly sentAt = new Map<string, number>();
  /** Delay of every delivery, in ms. */
  readonly delays: number[] = [];
  /** Per report: when its first and its last delivery arrived. */
  private readonly firstAt = new Map<string, number>();
  private readonly lastAt = new Map<string, number>();
  private readonly received = new Map<SseSubscriber, number>();
  private readonly lastArrivalOf = new Map<SseSubscriber, number>();

  sent(message: string): number {
    const now = performance.now();
    this.sentAt.set(message, now);
    return now;
  }

  /** The handler to give the streams; events that carry no report of this bench are not counted. */
  readonly onEvent = (event: ReceivedEvent, arrivedAt: number, subscriber: SseSubscriber): void => {
    const sent = event.message === undefined ? undefined : this.sentAt.get(event.message);
    if (sent === undefined || event.message === undefined) return;
    this.delays.push(arrivedAt - sent);
    if (!this.firstAt.has(event.message)) this.firstAt.set(event.message, arrivedAt);
    this.lastAt.set(event.message, arrivedAt);
    this.received.set(subscriber, (this.received.get(subscriber) ?? 0) + 1);
    this.lastArrivalOf.set(subscriber, arrivedAt);
  };

  /** Reports `subscriber` received. */
  count(subscriber: SseSubscriber): number {
    return this.received.get(subscriber) ?? 0;
  }

  /** Deliveries to all subscribers. */
  get total(): number {
    let sum = 0;
    for (const count of this.received.values()) sum += count;
    return sum;
  }

  /** When `subscriber`'s last delivery arrived. */
  lastArrival(subscriber: SseSubscriber): number | undefined {
    return this.lastArrivalOf.get(subscriber);
  }

  /** Per report sent, the delay until its first, and until its last, delivery (undelivered reports left out). */
  perReport(): { first: number[]; last: number[] } {
    const first: number[] = [];
    const last: number[] = [];
    for (const [message, sent] of this.sentAt) {
      const firstAt = this.firstAt.get(message);
      if (firstAt === undefined) continue;
      first.push(firstAt - sent);
      last.push(this.lastAt.get(message)! - sent);
    }
    return { first, last };
  }
}
