import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Keyword search attributes on every task workflow, so operators filter runs in the Temporal Web UI. */
export const AGENT_ID_ATTRIBUTE = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const OPERATION_ATTRIBUTE = defineSearchAttributeKey('Operation', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [AGENT_ID_ATTRIBUTE, OPERATION_ATTRIBUTE];
