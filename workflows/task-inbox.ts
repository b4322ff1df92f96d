// What a task hears from outside its steps: the agent's report, its input requests and people's
// answers to them, its room socket closing, an A2A agent's push, and a cancellation. The signal and update handlers
// write here; the steps read it.
import type { AgentReport, InputRequestNotice } from './task-types';

export class TaskInbox {
  /** The first report counts; kept even when it arrives before the call returned 202, so a fast agent's report is not lost. */
  report?: AgentReport;
  /** The agent's socket that got the TASK frame closed before it answered. */
  socketLost = false;
  /** A cancellation came before the task ended: it wins over any outcome not recorded by the agent's call. */
  cancelRequested = false;
  /** The A2A agent pushed an update of its task since the last poll of it. */
  pushArrived = false;
  /** A person answered an input request since the last poll of the agent's task. */
  answerArrived = false;
  /** The agent's latest input request. */
  private inputRequest?: InputRequestNotice;
  /** The request the task last took up: a later one is open again. */
  private takenUpRequest?: string;
  /** Requests answered, kept even when the answer's signal overtook the request's. */
  private readonly answeredRequests = new Set<string>();

  /** The agent's report; false when one came before. */
  reported(report: AgentReport): boolean {
    if (this.report) return false;
    this.report = report;
    return true;
  }

  inputRequested(request: InputRequestNotice): void {
    this.inputRequest = request;
  }

  inputAnswered(requestId: string): void {
    this.answeredRequests.add(requestId);
    this.answerArrived = true;
  }

  isAnswered(requestId: string): boolean {
    return this.answeredRequests.has(requestId);
  }

  /** The agent's input request not taken up yet. */
  openRequest(): InputRequestNotice | undefined {
    return this.inputRequest?.requestId === this.takenUpRequest ? undefined : this.inputRequest;
  }

  takeUp(request: InputRequestNotice): void {
    this.takenUpRequest = request.requestId;
  }

  /** The agent asked for input at least once: it has the task. */
  tookUpInput(): boolean {
    return this.takenUpRequest !== undefined;
  }
}
