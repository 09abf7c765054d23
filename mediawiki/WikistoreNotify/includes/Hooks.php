<?php

namespace MediaWiki\Extension\WikistoreNotify;

use MediaWiki\Hook\ArticleRevisionVisibilitySetHook;
use MediaWiki\Hook\PageMoveCompletingHook;
use MediaWiki\Page\Hook\ArticleProtectCompleteHook;
use MediaWiki\Page\Hook\ArticleUndeleteHook;
use MediaWiki\Page\Hook\PageDeleteCompleteHook;
use MediaWiki\Storage\Hook\PageSaveCompleteHook;

/** Each change a reader of the service could see, as a notice (see Notices). */
class Hooks implements
	PageSaveCompleteHook,
	PageDeleteCompleteHook,
	ArticleUndeleteHook,
	PageMoveCompletingHook,
	ArticleRevisionVisibilitySetHook,
	ArticleProtectCompleteHook
{
	/** An edit or a creation; a null edit changes nothing. A template's or module's edit is one too: the service renders its dependents again. */
	public function onPageSaveComplete( $wikiPage, $user, $summary, $flags, $revisionRecord, $editResult ) {
		if ( $editResult->isNullEdit() ) {
			return;
		}
		Notices::add( ( $flags & EDIT_NEW ) ? 'create' : 'edit', $wikiPage->getTitle(), [
			'revision' => [ 'rev_id' => $revisionRecord->getId() ],
		] );
	}

	public function onPageDeleteComplete( $page, $deleter, string $reason, int $pageID, $deletedRev, $logEntry, int $archivedRevisionCount ) {
		Notices::add( 'delete', $page );
	}

	public function onArticleUndelete( $title, $create, $comment, $oldPageId, $restoredPages ) {
		Notices::add( 'undelete', $title );
	}

	/**
	 * A move, told of as it is committed: MediaWiki runs PageMoveComplete in an update after the
	 * answer is sent, so a notice queued from there would reach the service after the client's
	 * next read. Should the move's transaction fail after this, the notice is sent anyway; the
	 * service asks the wiki what each page is now, so a move that did not happen changes nothing.
	 */
	public function onPageMoveCompleting( $old, $new, $user, $pageid, $redirid, $reason, $revision ) {
		Notices::add( 'move', $new, [ 'prior_state' => [ 'page' => Notices::pageOf( $old ) ] ] );
	}

	public function onArticleRevisionVisibilitySet( $title, $ids, $visibilityChangeMap ) {
		foreach ( $ids as $id ) {
			Notices::add( 'visibility_change', $title, [ 'revision' => [ 'rev_id' => (int)$id ] ] );
		}
	}

	public function onArticleProtectComplete( $wikiPage, $user, $protect, $reason ) {
		Notices::add( 'protect', $wikiPage->getTitle() );
	}
}
