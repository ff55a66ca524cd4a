// GET /api/runs/<runId>: the run's status, output and its own explanation.
import { errorAnswer, runStatus } from '../../../../../fulfil.ts';
import { getEngine } from '../../../../lib/engine.ts';

export const runtime = 'nodejs';
// A run's status changes: never cache this answer (Next 14 could cache a GET handler).
export const dynamic = 'force-dynamic';

// Next 15+ passes the dynamic segments as a promise.
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  try {
    const a = await runStatus(await getEngine(), (await params).id);
    return Response.json(a.body, { status: a.status });
  } catch (err) {
    const a = errorAnswer(err);
    return Response.json(a.body, { status: a.status });
  }
}
