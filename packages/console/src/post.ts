import {
  type BacklogProbe,
  type RecordStore,
  type Transport,
  discardDeadLetters,
  redriveDeadLetters,
} from '@onceflow/core';
import { type DeadLetterAction, previewPage, readSelection, runAction } from './actions.js';
import type { ConsoleAuthGate, Operator } from './auth.js';
import type { PageContext } from './layout.js';
import { page, refusal, streamed } from './response.js';
import {
  planReplay,
  readReplayForm,
  replayFormPage,
  replayPreviewPage,
  runReplay,
} from './replay.js';

const MAX_FORM_BYTES = 256 * 1024;

export interface PostDeps {
  readonly records: RecordStore;
  readonly transport?: Pick<Transport, 'publish'> | undefined;
  readonly backlog?: Readonly<Record<string, BacklogProbe>> | undefined;
  readonly write: boolean;
  readonly auth: ConsoleAuthGate;
}

/** The urlencoded form of a POST, or undefined past `MAX_FORM_BYTES`. */
export async function readForm(request: Request): Promise<URLSearchParams | undefined> {
  const text = await request.text();
  if (text.length > MAX_FORM_BYTES) return undefined;
  return new URLSearchParams(text);
}

const ACTIONS: Readonly<Record<string, DeadLetterAction | 'replay'>> = {
  '/dead-letters/redrive': 'redrive',
  '/dead-letters/purge': 'purge',
  '/replay': 'replay',
};

/**
 * An action: the form must be small, carry the operator's CSRF token, and the console must allow
 * writes (and have a transport, to publish). Without `apply=1` it answers with the dry run.
 */
export async function handleAction(
  deps: PostDeps,
  ctx: PageContext,
  operator: Operator,
  request: Request,
  path: string,
): Promise<Response> {
  const action = ACTIONS[path];
  if (!action) return page('Not found', 404);
  const form = await readForm(request);
  if (!form) return refusal(ctx, 'Too large', 'The form is too large.', 413);
  if (!deps.auth.checkCsrf(request, operator, form))
    return refusal(
      ctx,
      'Refused',
      'This form did not come from this console (CSRF check failed). Reload the page and try again.',
      403,
    );
  if (!deps.write)
    return refusal(
      ctx,
      'Read-only',
      'This console is read-only: redrive, purge and replay are off.',
      403,
    );
  const { records, transport } = deps;
  if (action !== 'purge' && !transport)
    return refusal(
      ctx,
      'No transport',
      `${action === 'redrive' ? 'Redrive' : 'Replay'} needs the console's transport option.`,
      403,
    );
  const actor = `console:${operator.name}`;
  const apply = form.get('apply') === '1';

  if (action === 'replay') {
    const read = readReplayForm(form);
    if (!read.selection) return page(replayFormPage(ctx, read.fields, read.problem), 400);
    const plan = await planReplay(records, read.selection, read.replayId);
    if (!apply) return page(replayPreviewPage(ctx, form, plan));
    return streamed(runReplay(ctx, transport as Pick<Transport, 'publish'>, plan, actor));
  }
  const selection = readSelection(form);
  if ('problem' in selection) return refusal(ctx, 'Nothing to do', selection.problem, 400);
  if (!apply) {
    const preview =
      action === 'redrive'
        ? await redriveDeadLetters(
            { records, transport: transport as Pick<Transport, 'publish'> },
            { ...selection, actor },
          )
        : await discardDeadLetters(records, { ...selection, actor });
    return page(previewPage(ctx, action, form, preview));
  }
  return streamed(runAction(ctx, { records, transport }, action, selection, actor));
}
