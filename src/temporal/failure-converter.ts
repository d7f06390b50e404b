import { DefaultFailureConverter } from '@temporalio/common';

/**
 * The failure converter of every client, worker and workflow bundle (`failureConverterPath`): a
 * failure's message and stack go into its encoded attributes, a payload that the payload codec
 * encrypts like any other. Temporal keeps "[encoded failure]" in clear; an error's text may name a
 * meeting, a URL or a person. Loaded inside the workflow sandbox too: nothing here but the SDK's.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
