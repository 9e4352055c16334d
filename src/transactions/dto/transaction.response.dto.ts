import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * The documented shapes of transaction.mapper.ts's `TransactionResponse` and submission result: the OpenAPI
 * document and the generated client read these classes; the mapper's interfaces stay what the code compiles
 * against.
 */

const STATUS = ['processing', 'confirmed', 'landed_with_error', 'expired'];
const AT = '2027-01-01T12:00:00.000Z';

export class TransactionHistoryEntryDto {
  @ApiProperty({ format: 'date-time', example: AT })
  at: string;

  @ApiProperty({ example: 'signed' })
  type: string;

  @ApiProperty({ enum: ['signing', 'signed', 'sign_rejected'], example: 'signed' })
  phase: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  status: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  failureReason: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  detail: string | null;

  @ApiProperty({
    example: 'request',
    description: 'Who made the change: a request or the background tracker',
  })
  actor: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null })
  startedAt: string | null;
}

/** A transaction record (camelCase, like the upstream's signed transaction); docs/transactions.md. */
export class TransactionResponseDto {
  @ApiProperty({ type: String, nullable: true, example: 'ctx_8f3a2b1c', description: 'null while signing' })
  custodialTransactionId: string | null;

  @ApiProperty({ enum: ['user', 'integrator'], example: 'user' })
  kind: string;

  @ApiProperty({ example: 'user-7' })
  subject: string;

  @ApiProperty({ example: 'list_ticket_v2' })
  instruction: string;

  @ApiProperty({ example: 'sell-2f7c91' })
  idempotencyKey: string;

  @ApiProperty({
    enum: ['signing', 'signed', 'sign_rejected'],
    example: 'signed',
    description: '`signing`: the outcome is not known yet',
  })
  phase: string;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: STATUS,
    example: 'processing',
    description: "The upstream's submission status as last reported; null: not submitted or not known",
  })
  status: string | null;

  @ApiProperty({
    example: false,
    description:
      'True only for confirmed, landed_with_error and expired; processing and null are NOT success',
  })
  final: boolean;

  @ApiProperty({ type: String, nullable: true, example: null })
  failureReason: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'Seller111111111111111111111111111111111111' })
  signerAddress: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'FeePayer1111111111111111111111111111111111' })
  feePayerAddress: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'AQAAAA…base64' })
  signedTransaction: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'AgABBA…base64' })
  message: string | null;

  @ApiProperty({ type: String, nullable: true, example: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb' })
  signature: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  feePayerSignature: string | null;

  @ApiProperty({ type: [String], nullable: true, example: ['Seller111111111111111111111111111111111111'] })
  requiredSigners: string[] | null;

  @ApiProperty({ type: String, nullable: true, example: 'GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi' })
  recentBlockhash: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { instruction: 'list_ticket_v2', params: [{ event_id: '100000', ticket_id: '1' }] },
    description: 'The instruction batch as signed',
  })
  platformInstructions: Record<string, unknown> | null;

  @ApiProperty({ example: 1 })
  submitAttempts: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'Last upstream error of signing or submission (sanitised), null after a success',
  })
  lastError: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['rejected', 'gave_up'],
    example: null,
    description: 'Why background tracking stopped without a final status',
  })
  trackingStopped: string | null;

  @ApiProperty({ format: 'date-time', example: AT })
  createdAt: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: AT })
  signedAt: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: AT })
  submittedAt: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null })
  finalAt: string | null;

  @ApiProperty({ format: 'date-time', example: AT })
  updatedAt: string;

  @ApiPropertyOptional({ type: [TransactionHistoryEntryDto], description: '`GET` of one record only' })
  history?: TransactionHistoryEntryDto[];
}

/** The contract's submission result (2.4), answered by `POST /v1/transactions/submissions`. */
export class SubmissionResultDto {
  @ApiProperty({ type: String, nullable: true, example: 'ctx_8f3a2b1c' })
  custodialTransactionId: string | null;

  @ApiProperty({ type: String, nullable: true, example: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb' })
  transactionSignature: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: STATUS,
    example: 'processing',
    description: 'null or processing is NOT success',
  })
  status: string | null;

  @ApiPropertyOptional({ example: 'blockhash not found' })
  failureReason?: string;
}
