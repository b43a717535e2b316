import { Kafka, logLevel } from 'kafkajs';
import { brokers } from './brokers.js';

/** Resolves once the group is stable with `members` members, each assigned something. */
export async function waitForGroup(groupId: string, members: number, timeoutMs = 30_000) {
  const admin = new Kafka({
    clientId: 'onceflow-test',
    brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [group] = (await admin.describeGroups([groupId])).groups;
      if (
        group?.state === 'Stable' &&
        group.members.length === members &&
        group.members.every((m) => m.memberAssignment.length > 0)
      )
        return;
      if (Date.now() > deadline)
        throw new Error(`group ${groupId}: not stable with ${members} members (${group?.state})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await admin.disconnect();
  }
}
