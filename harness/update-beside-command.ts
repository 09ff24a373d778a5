/**
 * Whether a recorded history has an Update accepted and completed by the same workflow task
 * that scheduled an activity: the task's commands and the Update's answer came out of one
 * activation, so their order there depends on when the workflow code issued each.
 */
export function updateBesideCommand(historyJson: string): boolean {
  const types = (JSON.parse(historyJson) as { events: { eventType: string }[] }).events.map((e) => e.eventType);
  for (let i = 0; i < types.length; i++) {
    if (types[i] !== 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED') continue;
    const batch = new Set<string>();
    for (let j = i + 1; j < types.length && types[j] !== 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED'; j++) batch.add(types[j] as string);
    if (batch.has('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED') && batch.has('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')) return true;
  }
  return false;
}
