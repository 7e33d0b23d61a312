/**
 * The API's bodies under the names the app uses, all taken from the generated OpenAPI types
 * (schema.d.ts, `npm run api-types`): when the API changes, the compiler says where.
 */
import type { components } from './schema';

type Schemas = components['schemas'];

/** A cursor page of `T`: follow `next` / `previous` as given (null at either end). */
export type Page<T> = Omit<Schemas['PaginatedOrderList'], 'results'> & { results: T[] };

// Accounts
export type Me = Schemas['Me'];
export type Role = Schemas['UserRoleEnum'];

// Catalog
export type Collection = Schemas['Collection'];
export type CollectionAccess = Schemas['AccessEnum'];
/** A collection's page: citation, variables and the extents (declared or from its granules). */
export type CollectionDetail = Schemas['CollectionDetail'];
export type CollectionVariable = Schemas['Variable'];
/** Where an extent comes from: the provider's declaration, the archived granules, or nothing. */
export type ExtentSource = Schemas['SourceEnum'];
export type Granule = Schemas['Granule'];
export type GranuleFile = Schemas['File'];
export type FileRole = Schemas['FileRoleEnum'];
/** [west, south, east, north] in degrees; west > east crosses the antimeridian. */
export type BBox = NonNullable<Granule['bbox']>;
/** Where a granule's bytes are: every file on disk now, or some only on tape. */
export type Residency = Schemas['ResidencyEnum'];
export type GranuleDetail = Schemas['GranuleDetail'];
export type StoredFile = Schemas['FileStorage'];
/** One copy of a file and where it lies: a tape volume in a silo, or an object in a bucket. */
export type StoredCopy = Schemas['Copy'];
/** The kind of storage a copy lies on: tape, or an object store. */
export type Medium = Schemas['MediumEnum'];
export type GranuleFacets = Schemas['GranuleFacets'];
export type FacetValue = Schemas['FacetValue'];
export type Timeline = Schemas['Timeline'];
/** A page of a granule search with, when asked for (include), its facets and timeline. */
export type GranuleSearchPage = Schemas['PaginatedGranuleList'];
export type TimelineBucket = Schemas['TimelineBucket'];
export type TimelineBucketSize = Schemas['TimelineBucketEnum'];
/** The search shape an uploaded GeoJSON, KML/KMZ or zipped shapefile gives. */
export type ShapeReading = Schemas['ShapeReading'];

// Distribution: cart and orders
export type Cart = Schemas['Cart'];
export type CartGranule = Schemas['CartItem'];
/** A granule withdrawn or deleted since it was put in the cart. */
export type WithdrawnCartGranule = Schemas['WithdrawnItem'];
/** The 410 body of a withdrawn or deleted granule's page. */
export type GranuleGone = Schemas['GranuleGone'];
export type AddedMatching = Schemas['AddedMatching'];
export type OrderLimits = Schemas['OrderLimits'];
export type Order = Schemas['Order'];
export type OrderState = Schemas['OrderStateEnum'];
export type OrderDetail = Schemas['OrderDetail'];
export type OrderItem = Schemas['OrderItem'];
export type ItemState = Schemas['OrderItemStateEnum'];
export type Delivery = Schemas['DeliveryEnum'];
export type NewOrder = Schemas['OrderCreateRequest'];
/** What to cut out of each data file of an order, and what that gives (cart/subset/). */
export type SubsetOptions = Schemas['SubsetOptionsRequest'];
export type SubsetFormat = Schemas['SubsetOptionsFormatEnum'];
export type SubsetEstimate = Schemas['SubsetEstimate'];
export type OrderLinks = Schemas['Links'];
export type DownloadLink = Schemas['Link'];

// Distribution: the Tape REST API's bulk stage requests
/** A stage request with its files' state counts, ETA and the volumes its files need. */
export type StageRequest = Schemas['StageRequest'];
/** 0 high (as an operator's recall), 1 normal (as an order), 2 low (behind migrations). */
export type StagePriority = Schemas['StagePriorityEnum'];
/** A kind of recall (order, stage...) with the operator's weight for the drives' fair share. */
export type RecallShare = Schemas['RecallShare'];
export type RecallSharesUpdate = Schemas['RecallSharesUpdateRequest'];

// Distribution: destinations and subscriptions
export type Destination = Schemas['Destination'];
export type DestinationKind = Schemas['DestinationKindEnum'];
export type DestinationBody = Schemas['DestinationRequest'];
export type SftpKey = Schemas['SftpKey'];
export type Subscription = Schemas['Subscription'];
export type SubscriptionBody = Schemas['SubscriptionRequest'];
export type SubscriptionChange = Schemas['PatchedSubscriptionRequest'];
/** What a subscription matches; the preview takes the same body. */
export type SubscriptionFilter = Omit<Schemas['SubscriptionPreviewRequest'], 'days'>;
export type DeliveryMode = Schemas['ModeEnum'];
export type Condition = Schemas['ConditionRequest'];
export type ConditionOp = Schemas['OpEnum'];
export type ConditionValue = Condition['value'];
export type Preview = Schemas['SubscriptionPreviewResult'];
export type PreviewGranule = Schemas['PreviewGranule'];
export type ApplyResult = Schemas['SubscriptionApplyResult'];
export type SubscriptionDelivery = Schemas['SubscriptionDelivery'];
export type DeliveryState = Schemas['SubscriptionDeliveryStateEnum'];

// Ingest
export type IngestRequest = Schemas['IngestRequest'];
export type IngestRequestState = Schemas['IngestRequestStateEnum'];
export type IngestRequestDetail = Schemas['RequestDetail'];
export type IngestGranuleRow = Schemas['IngestGranuleRow'];
export type IngestGranuleState = Schemas['IngestGranuleStateEnum'];
export type RetryResult = Schemas['RetryResult'];
export type Pdr = Schemas['Pdr'];
export type PdrState = Schemas['PdrStateEnum'];

// Archive (operators)
export type ArchiveRequest = Schemas['ArchiveRequest'];
export type ArchiveRequestKind = Schemas['KindEnum'];
/** An object-store bucket as a copy target, beside the volume groups. */
export type Bucket = Schemas['Bucket'];
/** A bucket on the archive board: what it holds, its work, transfers, failures and health. */
export type BucketFigures = Schemas['BucketBoard'];
export type BucketWork = Schemas['BucketWork'];
export type BulkAction = Schemas['BulkRequest'];
export type BulkResult = Schemas['BulkResult'];
export type CacheUsage = Schemas['CacheUsage'];
export type Drive = Schemas['Drive'];
export type QueueRow = Schemas['QueueRow'];
export type Reconciliation = Schemas['Reconciliation'];
export type Discrepancy = Schemas['Discrepancy'];
/** What a reconciliation saw that breaks no promise (bytes past a volume's end of data). */
export type ReconciliationNote = Schemas['Note'];
export type ReconcileRequest = Schemas['ReconcileRequest'];
export type RepairResult = Schemas['RepairResult'];
export type Volume = Schemas['Volume'];
export type VolumeGroup = Schemas['VolumeGroup'];

// Metrics (operators)
export type Today = Schemas['Today'];
export type TodayDirection = Schemas['TodayDirection'];
/** The directions the dashboards chart against a daily target. */
export type ChartedDirection = keyof Today['directions'];
export type Daily = Schemas['Daily'];
export type DailyRow = Schemas['DailyRow'];
export type SyntheticHistory = Schemas['SyntheticHistory'];
export type Throughput = Schemas['Throughput'];
export type Targets = Schemas['DailyTargets'];
export type TargetsChange = Schemas['TargetsRequest'];

// Console (operators): failures grouped by reason, dead letters
export type FailureGroup = Schemas['FailureGroup'];
export type FailureWhere = Schemas['FailureWhereEnum'];
export type FailureKind = Schemas['FailureKindEnum'];
export type RetryGroupResult = Schemas['RetryGroupResult'];
export type RedeliverGroupResult = Schemas['RedeliverGroupResult'];
/** What can still be done about a failure, as the server judges it (possible or why not). */
export type Remedy = Schemas['Action'];
export type DeadLetter = Schemas['DeadLetter'];
export type DeadLetterKind = Schemas['DeadLetterKindEnum'];
export type DeadLetterPage = Schemas['DeadLetterPage'];
export type ReplayBody = Schemas['ReplayRequest'];
export type ReplayResult = Schemas['ReplayResult'];

// Bulk jobs of the operator's console
export type BulkJob = Schemas['BulkJob'];
export type BulkJobDetail = Schemas['BulkJobDetail'];
export type OutcomeGroup = Schemas['OutcomeGroup'];
export type BulkJobKind = Schemas['BulkJobKindEnum'];
export type BulkItem = Schemas['BulkItem'];
export type BulkItemState = Schemas['BulkItemStateEnum'];
export type BulkDryRun = Schemas['DryRun'];
export type NewBulkJob = Schemas['NewBulkJobRequest'];

// Operator's console: granules across providers
export type ConsoleGranule = Schemas['ConsoleGranule'];
export type GranuleState = ConsoleGranule['state'];
export type GranuleStateCounts = Schemas['StateCounts'];
export type ConsoleGranulePage = Schemas['ConsoleGranulePage'];
export type ConsoleFile = Schemas['ConsoleFile'];
export type ConsoleCopy = Schemas['ConsoleCopy'];
export type GranuleEvent = Schemas['GranuleEvent'];
export type IngestFailure = Schemas['IngestFailure'];
export type Released = Schemas['Released'];

// Configuration (operators)
export type CollectionConfig = Schemas['CollectionConfig'];
export type CollectionConfigChange = Schemas['CollectionConfigRequest'];
export type ArchivePolicy = Schemas['Policy'];
export type ProviderConfig = Schemas['ProviderConfig'];
export type ProviderConfigChange = Schemas['ProviderConfigRequest'];
export type UserConfig = Schemas['UserConfig'];
export type UserConfigChange = Schemas['UserConfigRequest'];
export type NewUser = Schemas['NewUser'];
export type GroupRole = Schemas['GroupRoleEnum'];
export type AuditEvent = Schemas['AuditEvent'];

// Completeness (operators)
export type CompletenessDay = Schemas['DayReport'];
export type CompletenessGap = Schemas['Gap'];
export type LateGranule = Schemas['Late'];
export type CompletenessWorst = Schemas['Worst'];
export type WorstCollection = Schemas['WorstRow'];

export type AuthMethods = Schemas['AuthMethods'];
export type ApiToken = Schemas['ApiToken'];
export type NewApiToken = Schemas['NewApiToken'];
export type ApiTokenRequest = Schemas['TokenRequestRequest'];
export type TokenScope = ApiToken['scopes'][number];
export type SignInRule = Schemas['SignInRule'];
export type SignInRuleRequest = Schemas['SignInRuleRequest'];

// Events: where a user's events go (endpoints with rules) and each endpoint's delivery log
export type EventEndpoint = Schemas['Endpoint'];
export type EventEndpointBody = Schemas['EndpointRequest'];
export type EventEndpointWithSecret = Schemas['EndpointWithSecret'];
export type EventDelivery = Schemas['EventDelivery'];
export type EventDeliveryState = Schemas['EventDeliveryStateEnum'];
export type EventRuleChoices = Schemas['RuleChoices'];
export type EventRule = Schemas['RuleRequest'];
