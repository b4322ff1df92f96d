// How a map's child workflows start (the map's, and each of its chunks'): cancelled with their
// parent, which waits for them to record their items and themselves cancelled.
import { ChildWorkflowCancellationType, ParentClosePolicy, type ChildWorkflowOptions } from '@temporalio/workflow';

export const MAP_CHILD_OPTIONS: ChildWorkflowOptions = {
  parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
  // As the launcher's for a composition: the items' bookkeeping runs as local activities.
  workflowTaskTimeout: '5 seconds',
};
