import type { ParticipantRef } from '../auth/participant';
import type { Principal } from '../auth/principal';
import { canSeeShared, type Visibility } from '../registry/agent';
import type { Store } from '../store/mongo';
import { VersionClaims } from '../store/version-claims';
import type { VirtualToolEntry } from './virtual-server-schema';

export const MCP_VIRTUAL_SERVERS_COLLECTION = 'mcp_virtual_servers';
export const MCP_VIRTUAL_SERVER_CLAIMS_COLLECTION = 'mcp_virtual_server_claims';

/** A named set of tools of agents, served as an MCP server of its own at `/mcp/{serverId}`. */
export interface VirtualServer {
  id: string;
  name: string;
  description: string;
  tools: VirtualToolEntry[];
  visibility: Visibility;
  /** Who else may see it when private, typed as an agent's `sharedWith` is. */
  sharedWith: ParticipantRef[];
  /** The service or human that defined it; undefined when an admin did. */
  owner?: Principal;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

interface VirtualServerDocument extends Omit<VirtualServer, 'id' | 'tools'> {
  _id: string;
  /** As JSON text: defaults are free JSON, with keys (`a.b`, `$x`) a store may refuse as field names. */
  tools: string;
}

/** Servers read per batch while a page of those a caller may see is chosen. */
const LIST_BATCH = 200;

/** The virtual servers, read by `_id`; a list reads them in `_id` order, keeping those the caller may see. */
export class VirtualServers {
  private readonly claims: VersionClaims;

  constructor(private readonly store: Store) {
    this.claims = new VersionClaims(store, MCP_VIRTUAL_SERVER_CLAIMS_COLLECTION, MCP_VIRTUAL_SERVERS_COLLECTION);
  }

  private get collection() {
    return this.store.collection<VirtualServerDocument>(MCP_VIRTUAL_SERVERS_COLLECTION);
  }

  async insert(server: VirtualServer): Promise<void> {
    await this.collection.insertOne(documentOf(server));
  }

  /** The server `serverId` when `principal` may see it; null otherwise, so that callers answer 404 either way. */
  async findVisible(principal: Principal, serverId: string): Promise<VirtualServer | null> {
    const found = await this.collection.findOne({ _id: serverId });
    const server = found && serverOf(found);
    return server && canSeeShared(principal, server) ? server : null;
  }

  /**
   * Replaces the stored server if it is still at `expectedVersion`, holding that version's claim;
   * false when it changed or was deleted meanwhile, or another change of it is under way.
   */
  async replace(server: VirtualServer, expectedVersion: number): Promise<boolean> {
    const { _id, ...fields } = documentOf(server);
    return this.claims.whileClaimed(_id, expectedVersion, () =>
      this.collection.replaceOne({ _id, version: expectedVersion }, fields),
    );
  }

  async delete(serverId: string): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: serverId })).deletedCount === 1;
  }

  /** Up to `limit` servers `principal` may see, by serverId, after `after`. */
  async listVisible(principal: Principal, page: { limit: number; after?: string }): Promise<VirtualServer[]> {
    const chosen: VirtualServer[] = [];
    for (let after = page.after; chosen.length < page.limit;) {
      const batch = await this.collection
        .find(after === undefined ? {} : { _id: { $gt: after } })
        .sort({ _id: 1 })
        .limit(LIST_BATCH)
        .toArray();
      for (const document of batch) {
        const server = serverOf(document);
        if (canSeeShared(principal, server) && chosen.length < page.limit) chosen.push(server);
      }
      if (batch.length < LIST_BATCH) break;
      after = batch[batch.length - 1]._id;
    }
    return chosen;
  }
}

function documentOf({ id, tools, owner, ...rest }: VirtualServer): VirtualServerDocument {
  return {
    _id: id,
    ...rest,
    ...(owner ? { owner: { kind: owner.kind, id: owner.id } } : {}),
    tools: JSON.stringify(tools),
  };
}

function serverOf({ _id, tools, ...rest }: VirtualServerDocument): VirtualServer {
  return { id: _id, ...rest, tools: JSON.parse(tools) as VirtualToolEntry[] };
}
