import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { StartedPass } from '../catalog-sync.service';
import type { ResourceStatus, SyncPassSummary } from '../sync-pass.status';

/** One sync pass. */
export class SyncPassDto {
  @ApiProperty({ example: '42' })
  id: string;

  @ApiProperty({ enum: ['events', 'listings', 'event_listings'] })
  resource: string;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Event of an event refresh (u64 string)',
    example: null,
  })
  scopeEventId: string | null;

  @ApiProperty({ enum: ['running', 'completed', 'failed', 'cancelled'] })
  status: string;

  @ApiProperty({ enum: ['startup', 'schedule', 'operator', 'refresh'] })
  trigger: string;

  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  startedAt: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: '2027-01-01T12:00:41.000Z' })
  finishedAt: string | null;

  @ApiProperty({ example: 20 })
  pages: number;

  @ApiProperty({ example: 2000 })
  items: number;

  @ApiProperty({ description: 'Rows inserted or changed (unchanged rows are not written)', example: 12 })
  upserted: number;

  @ApiProperty({ description: 'Rows marked removed by the sweep of a completed pass', example: 1 })
  removed: number;

  @ApiProperty({ description: 'Items skipped: missing or null identifiers', example: 0 })
  skipped: number;

  @ApiProperty({ nullable: true, type: String, example: null })
  error: string | null;

  static from(pass: SyncPassSummary): SyncPassDto {
    return {
      ...pass,
      startedAt: pass.startedAt.toISOString(),
      finishedAt: pass.finishedAt?.toISOString() ?? null,
    };
  }
}

export class RunningSyncPassDto extends SyncPassDto {
  @ApiProperty({ example: 1800 })
  itemsPerSecond: number;
}

export class StartedSyncPassDto {
  @ApiProperty({ enum: ['events', 'listings', 'event_listings'] })
  resource: string;

  @ApiProperty({ nullable: true, type: String, example: null })
  eventId: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The new pass, or the one already running',
    example: '42',
  })
  passId: string | null;

  @ApiProperty({
    description: 'A pass for this scope was already running (passId is that pass)',
    example: false,
  })
  alreadyRunning: boolean;

  static from(p: StartedPass): StartedSyncPassDto {
    return { ...p };
  }
}

export class TriggerSyncResponseDto {
  @ApiProperty({ description: 'The first started pass', example: '42' })
  passId: string;

  @ApiProperty({ type: [StartedSyncPassDto] })
  passes: StartedSyncPassDto[];
}

export class ResourceSyncStatusDto {
  @ApiProperty({ enum: ['events', 'listings'] })
  resource: string;

  @ApiPropertyOptional({ type: SyncPassDto, nullable: true })
  lastCompleted: SyncPassDto | null;

  @ApiProperty({ type: [RunningSyncPassDto] })
  running: RunningSyncPassDto[];

  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'Seconds since the last complete pass',
    example: 12.5,
  })
  lagSeconds: number | null;

  @ApiProperty({ type: [SyncPassDto] })
  recentFailures: SyncPassDto[];

  static from(s: ResourceStatus): ResourceSyncStatusDto {
    return {
      resource: s.resource,
      lastCompleted: s.lastCompleted ? SyncPassDto.from(s.lastCompleted) : null,
      running: s.running.map((r) => Object.assign(SyncPassDto.from(r), { itemsPerSecond: r.itemsPerSecond })),
      lagSeconds: s.lagSeconds === null ? null : Math.round(s.lagSeconds * 10) / 10,
      recentFailures: s.recentFailures.map((f) => SyncPassDto.from(f)),
    };
  }
}

export class SyncStatusResponseDto {
  @ApiProperty({ type: [ResourceSyncStatusDto] })
  resources: ResourceSyncStatusDto[];
}
