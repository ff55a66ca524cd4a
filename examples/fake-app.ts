// Stand-ins for the host app: a user table and a mail API that fails now and then,
// so the demo shows a retry. The idempotency key is what a real mail API would dedup on.
const delivered = new Set<string>();
let calls = 0;

export async function loadUser(userId: string): Promise<{ id: string; email: string; activated: boolean }> {
  return { id: userId, email: `${userId}@example.test`, activated: false };
}

export async function sendMail(to: string, idempotencyKey: string): Promise<{ messageId: string; duplicate: boolean }> {
  calls++;
  if (calls === 1) throw new Error('mail API 503 (simulated)');
  const duplicate = delivered.has(idempotencyKey);
  delivered.add(idempotencyKey);
  return { messageId: `msg-${idempotencyKey}`, duplicate };
}
