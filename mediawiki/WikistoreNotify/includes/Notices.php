<?php

namespace MediaWiki\Extension\WikistoreNotify;

use DeferredUpdates;
use MediaWiki\Linker\LinkTarget;
use MediaWiki\MediaWikiServices;
use MediaWiki\Page\PageReference;

/**
 * The changes of one request, sent to the service in one POST once the wiki has committed them
 * and before it answers its client (a PRESEND deferred update): the client's next read through
 * the service sees them. Events have the shape of EventBus's page_change events.
 */
class Notices {
	/** @var array[] Events of this request not sent yet */
	private static $pending = [];

	/**
	 * @param string $kind page_change_kind: create, edit, delete, undelete, move, visibility_change, protect
	 * @param LinkTarget|PageReference $page The page as it is now
	 * @param array $extra revision / prior_state fields of the event
	 */
	public static function add( string $kind, $page, array $extra = [] ): void {
		$config = MediaWikiServices::getInstance()->getMainConfig();
		if ( !$config->get( 'WikistoreNotifyUrl' ) ) {
			return;
		}
		if ( !self::$pending ) {
			DeferredUpdates::addCallableUpdate( [ self::class, 'send' ], DeferredUpdates::PRESEND );
		}
		self::$pending[] = [
			'page_change_kind' => $kind,
			'dt' => gmdate( 'Y-m-d\TH:i:s\Z' ),
			'page' => self::pageOf( $page ),
		] + $extra;
	}

	/** @param LinkTarget|PageReference $page */
	public static function pageOf( $page ): array {
		$titleFormatter = MediaWikiServices::getInstance()->getTitleFormatter();
		return [
			'page_title' => $titleFormatter->getPrefixedDBkey( $page ),
			'namespace_id' => $page->getNamespace(),
		];
	}

	/**
	 * The domain the service knows this wiki by: $wgWikistoreNotifyDomain, else the host of
	 * $wgServer (a farm's wikis each have their own).
	 */
	public static function domain(): string {
		$config = MediaWikiServices::getInstance()->getMainConfig();
		$domain = (string)$config->get( 'WikistoreNotifyDomain' );
		return $domain !== '' ? $domain : (string)parse_url( $config->get( 'Server' ), PHP_URL_HOST );
	}

	/** Sends what this request changed; a service that is down or slow costs the edit the timeout at most. */
	public static function send(): void {
		$events = self::$pending;
		self::$pending = [];
		if ( !$events ) {
			return;
		}
		$services = MediaWikiServices::getInstance();
		$config = $services->getMainConfig();
		$timeout = (float)$config->get( 'WikistoreNotifyTimeout' );
		$domain = self::domain();
		foreach ( $events as &$event ) {
			// As EventBus's page_change events name their wiki: one intake may take a farm's.
			$event['meta'] = [ 'domain' => $domain ];
		}
		unset( $event );
		$url = str_replace( '{domain}', rawurlencode( $domain ), $config->get( 'WikistoreNotifyUrl' ) );
		$request = $services->getHttpRequestFactory()->create( $url, [
			'method' => 'POST',
			'postData' => json_encode( $events ),
			'timeout' => $timeout,
			'connectTimeout' => min( $timeout, 1.0 ),
		], __METHOD__ );
		$request->setHeader( 'Content-Type', 'application/json' );
		$request->setHeader( 'Authorization', 'Bearer ' . $config->get( 'WikistoreNotifySecret' ) );
		$status = $request->execute();
		if ( !$status->isOK() ) {
			// The service's own poll of the recent changes catches what a lost notice missed.
			wfDebugLog( 'WikistoreNotify', 'a notice was not taken: ' . $request->getStatus() . ' ' .
				substr( (string)$request->getContent(), 0, 300 ) );
		}
	}
}
